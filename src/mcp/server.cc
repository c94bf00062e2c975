#include "mcp/server.h"

#include <algorithm>
#include <iostream>

#include "audit/redaction.h"
#include "base/encoding.h"
#include "codemode/bridge_frames.h"
#include "codemode/settings.h"
#include "protocol/json_rpc.h"
#include "mcp/tools/catalog_tools.h"
#include "mcp/tools/execute_tool.h"
#include "mcp/tools/gateway_tool.h"
#include "mcp/tools/propose_tool.h"
#include "mcp/tools/run_code_tool.h"
#include "mcp/tools/session_tools.h"

namespace airlock::mcp {
namespace {

// Pool threads: enough for every run the executor may hold (running plus
// queued) so that its own "busy" answer is what callers normally see, plus
// a few for list_languages and for calls that are finishing.
size_t PoolSize(const config::Config& c) {
  return static_cast<size_t>(c.ResolvedMaxConcurrentRuns()) + static_cast<size_t>(c.server.max_queued_runs) + 4;
}

governance::Policy PolicyOf(const config::Config& c) {
  StatusOr<governance::Policy> p = governance::Policy::FromJson(c.roles, c.endpoints, c.access);
  if (p.ok()) return std::move(p).value();
  std::cerr << "airlock: invalid roles/endpoints/access (serving nothing): " << p.status().message() << "\n";
  // Roles nobody has: every caller sees nothing.
  nlohmann::json none = {{"path", "/none"}, {"code_mode", "off"}, {"run_code", false}};
  none["connectors"] = nlohmann::json::array();
  return governance::Policy::FromJson(nullptr, {{"none", none}}, nullptr).value();
}

// The isolation tiers of the endpoint this server serves (none if unknown:
// then it offers nothing anyway).
std::vector<std::string> TiersOf(const governance::Policy& policy, const std::string& endpoint) {
  const governance::Endpoint* e = endpoint.empty() ? policy.DefaultEndpoint() : policy.FindEndpoint(endpoint);
  return e != nullptr ? e->isolation : std::vector<std::string>{};
}

// The endpoint's operator package directories ("packages"; none if unknown).
std::vector<std::string> PackagesOf(const governance::Policy& policy, const std::string& endpoint) {
  const governance::Endpoint* e = endpoint.empty() ? policy.DefaultEndpoint() : policy.FindEndpoint(endpoint);
  return e != nullptr ? e->packages : std::vector<std::string>{};
}

}  // namespace

McpServer::McpServer(const config::Config& config, runtimes::CodeExecutor& executor, gateway::Gateway* gateway,
                     ServerOptions options)
    : config_(config),
      options_(std::move(options)),
      gateway_(gateway),
      policy_(PolicyOf(config_)),
      catalog_(executor, config_, TiersOf(policy_, options_.endpoint), PackagesOf(policy_, options_.endpoint)),
      pool_(PoolSize(config_)) {
  const governance::Endpoint* e =
      options_.endpoint.empty() ? policy_.DefaultEndpoint() : policy_.FindEndpoint(options_.endpoint);
  if (e != nullptr) {
    endpoint_ = *e;
    endpoint_ok_ = true;
  } else {
    std::cerr << "airlock: no endpoint \"" << options_.endpoint << "\" (serving nothing)\n";
    endpoint_.name = options_.endpoint;
    endpoint_.connectors.clear();
    endpoint_.code_mode = governance::CodeMode::kOff;
    endpoint_.run_code = false;
  }
  access_ = std::make_unique<Access>(policy_, endpoint_, gateway_);
  if (config_.sessions.enabled && endpoint_.sessions && endpoint_.run_code) {
    if (options_.sessions == nullptr) {
      own_sessions_ = std::make_unique<sessions::SessionRegistry>(executor, config_.sessions,
                                                                  config_.ResolvedMaxSessions(), options_.audit);
    }
    code_sessions_ = options_.sessions != nullptr ? options_.sessions : own_sessions_.get();
    open_session_ = std::make_shared<OpenSessionTool>(*code_sessions_, catalog_, options_.audit);
    close_session_ = std::make_shared<CloseSessionTool>(*code_sessions_);
    list_sessions_ = std::make_shared<ListSessionsTool>(*code_sessions_);
    pause_session_ = std::make_shared<PauseSessionTool>(*code_sessions_, /*pause=*/true);
    resume_session_ = std::make_shared<PauseSessionTool>(*code_sessions_, /*pause=*/false);
    fork_session_ = std::make_shared<ForkSessionTool>(*code_sessions_);
  }
  run_code_ = std::make_shared<RunCodeTool>(catalog_, options_.audit, code_sessions_);
  list_languages_ = std::make_shared<ListLanguagesTool>(catalog_);
  // Code mode is offered when there is something to call: at least one
  // connector configured (mcpServers) and codeMode.enabled not false.
  if (gateway_ != nullptr && !gateway_->connector_names().empty()) {
    // The caller validated the section (serve refuses a bad config).
    StatusOr<codemode::Settings> settings = codemode::SettingsFromJson(config_.code_mode);
    // Gateway-mode results obey the same per-result cap as code mode's.
    if (settings.ok()) code_limits_ = settings->limits;
    if (settings.ok() && settings->enabled) {
      code_mode_ = true;
      code_limits_ = settings->limits;
      auto execute = std::make_shared<ExecuteTool>(*gateway_, executor, *access_, options_.audit, code_limits_,
                                                   1u << 20);
      if (open_session_ != nullptr) {  // code-mode sessions: cells are execute calls
        execute->UseSessions(code_sessions_);
        std::static_pointer_cast<OpenSessionTool>(open_session_)->OfferCodeMode(endpoint_);
      }
      execute_ = std::move(execute);
      search_ = std::make_shared<SearchToolsTool>(*gateway_, *access_);
      describe_ = std::make_shared<DescribeToolTool>(*gateway_, *access_);
      if (options_.code_tools != nullptr) {
        propose_ = std::make_shared<ProposeCodeToolTool>(
            *options_.code_tools, *access_, options_.audit,
            std::set<std::string>{"run_code", "list_languages", "execute", "search_tools", "describe_tool",
                                  "propose_code_tool"},
            settings->proposals_per_hour);
      }
    }
  }
  if (config_.tasks.mode != "never") {
    tasks_ = std::make_unique<TaskManager>(config_.tasks, config_.limits.max_timeout_ms,
                                           config_.limits.default_timeout_ms, pool_, runs(), options_.audit,
                                           options_.tasks != nullptr
                                               ? options_.tasks
                                               : std::make_shared<tasks::MemoryTaskStore>());
  }
  code_tool_deps_ = {.gateway = gateway_,
                     .executor = &executor,
                     .access = access_.get(),
                     .audit = options_.audit,
                     .store = options_.code_tools,
                     .admin_limits = code_limits_};
}

McpServer::~McpServer() = default;

governance::Caller McpServer::StdioCaller() const {
  return {.user = policy_.stdio().user, .role = policy_.stdio().role, .auth = "stdio", .endpoint = endpoint_.name};
}

std::shared_ptr<Session> McpServer::NewSession(std::shared_ptr<ReplyChannel> standalone, governance::Caller caller) {
  caller.endpoint = endpoint_.name;
  auto session = std::make_shared<Session>(*this, std::move(standalone), std::move(caller));
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
  sessions_.push_back(session);
  return session;
}

std::vector<std::shared_ptr<Session>> McpServer::LiveSessions() {
  std::vector<std::shared_ptr<Session>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::weak_ptr<Session>& w : sessions_) {
    if (auto s = w.lock()) out.push_back(std::move(s));
  }
  return out;
}

void McpServer::NotifyToolsChanged() {
  nlohmann::json n = protocol::jsonrpc::MakeNotification("notifications/tools/list_changed", nullptr);
  for (const auto& s : LiveSessions()) {
    if (s->initialized()) s->SendStandalone(n);
  }
  subscriptions_.Publish(SubscriptionHub::Kind::kToolsListChanged);
}

void McpServer::Broadcast(LogLevel level, const std::string& text) {
  nlohmann::json n = protocol::jsonrpc::MakeNotification(
      "notifications/message", {{"level", LogLevelName(level)}, {"logger", "airlock"}, {"data", text}});
  for (const auto& s : LiveSessions()) {
    if (s->initialized()) s->SendStandalone(n);
  }
}

std::vector<std::shared_ptr<Tool>> McpServer::ToolsFor(const governance::Caller& caller) {
  std::vector<std::shared_ptr<Tool>> out;
  const governance::Role* role = policy_.FindRole(caller.role);
  if (role == nullptr || !endpoint_ok_) return out;
  if (endpoint_.run_code && role->inline_code) {
    out.push_back(run_code_);
    out.push_back(list_languages_);
    if (code_sessions_ != nullptr) {
      out.push_back(open_session_);
      out.push_back(close_session_);
      out.push_back(list_sessions_);
      out.push_back(pause_session_);
      out.push_back(resume_session_);
      out.push_back(fork_session_);
    }
  }
  if (code_mode_ && endpoint_.code_mode == governance::CodeMode::kInline) {
    if (role->inline_code) {
      out.push_back(execute_);
      out.push_back(search_);
      out.push_back(describe_);
    }
    if (propose_ != nullptr && role->propose) out.push_back(propose_);
  }
  if (code_mode_ && endpoint_.code_mode != governance::CodeMode::kOff && options_.code_tools != nullptr) {
    // Code tools are offered on every endpoint with code mode (wherever they
    // were proposed), to callers who can see what they use there; names are
    // global: the newest approved, intact version of a name wins.
    StatusOr<std::vector<codetools::CodeTool>> active =
        options_.code_tools->List(codetools::State::kApproved, /*endpoint=*/"");
    if (active.ok()) {
      std::set<std::string> seen;
      std::stable_sort(active->begin(), active->end(), [](const codetools::CodeTool& a, const codetools::CodeTool& b) {
        return a.decided_at > b.decided_at;
      });
      for (codetools::CodeTool& t : *active) {
        if (!t.intact || codetools::HashOf(t.proposal) != t.hash || !seen.insert(t.proposal.name).second) continue;
        if (CodeToolTool::VisibleTo(*access_, caller, t)) {
          out.push_back(std::make_shared<CodeToolTool>(code_tool_deps_, std::move(t)));
        }
      }
    } else {
      std::cerr << "airlock: code tools unavailable: " << active.status().message() << "\n";
    }
  }
  if (endpoint_.gateway && gateway_ != nullptr) {
    const std::set<std::string> connectors = access_->VisibleConnectors(caller);
    for (gateway::ToolEntry& e : gateway_->ListTools(access_->CallableFilter(caller), &connectors)) {
      out.push_back(std::make_shared<GatewayTool>(*gateway_, *access_, options_.audit, std::move(e),
                                                  code_limits_.max_result_bytes));
    }
  }
  return out;
}

std::shared_ptr<Tool> McpServer::FindToolFor(const governance::Caller& caller, const std::string& name) {
  for (std::shared_ptr<Tool>& t : ToolsFor(caller)) {
    if (t->name() == name) return std::move(t);
  }
  return nullptr;
}

Status McpServer::AuditToolCall(const governance::Caller& caller, const std::string& run_id, const std::string& tool,
                                const nlohmann::json& args, const std::string& decision,
                                const TraceContext& trace) {
  if (options_.audit == nullptr) return OkStatus();
  nlohmann::json detail = {{"run_id", run_id},
                           {"decision", decision},
                           {"role", caller.role},
                           {"endpoint", caller.endpoint},
                           {"client", caller.client},
                           {"auth", caller.auth},
                           {"key_id", caller.key_id},
                           {"args_sha256", Sha256Hex(codemode::Dump(args))},
                           {"args_redacted", audit::RedactArgs(args)}};
  if (!trace.traceparent.empty()) detail["traceparent"] = trace.traceparent;
  if (!trace.tracestate.empty()) detail["tracestate"] = trace.tracestate;
  return options_.audit->Event({.kind = "tool_call",
                                .actor = caller.user,
                                .target = SanitizeUtf8(tool.substr(0, 128)),
                                .detail = std::move(detail)});
}

std::string McpServer::Instructions() {
  std::string langs;
  for (const runtimes::LanguageInfo& l : catalog_.Languages()) langs += (langs.empty() ? "" : ", ") + l.name;
  return "Airlock runs untrusted code in an isolated Linux sandbox (no network; a one-shot run "
         "keeps nothing). Use run_code to execute a program" +
         (langs.empty() ? std::string() : " in " + langs) +
         " and get stdout, stderr, exit status and produced files (images are returned as "
         "images). Use list_languages or the airlock://languages resource for versions, "
         "preinstalled libraries and limits." +
         (code_mode_ ? std::string(" To use the tools of the MCP servers airlock is connected to, find them with "
                                   "search_tools, read their schema with describe_tool, and call them from a short "
                                   "JavaScript or Python program with execute (many calls in one step).")
                     : std::string()) +
         (code_sessions_ != nullptr ? std::string(" For step-by-step work (load data, inspect it, transform it, plot it), "
                                             "open_session starts an interpreter whose variables and files persist "
                                             "across run_code calls that pass its session_id.")
                               : std::string());
}

}  // namespace airlock::mcp
