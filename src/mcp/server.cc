#include "mcp/server.h"

#include "mcp/json_rpc.h"
#include "codemode/settings.h"
#include "mcp/tools/catalog_tools.h"
#include "mcp/tools/execute_tool.h"
#include "mcp/tools/run_code_tool.h"

namespace airlock::mcp {
namespace {

// Pool threads: enough for every run the executor may hold (running plus
// queued) so that its own "busy" answer is what callers normally see, plus
// a few for list_languages and for calls that are finishing.
size_t PoolSize(const config::Config& c) {
  return static_cast<size_t>(c.ResolvedMaxConcurrentRuns()) + static_cast<size_t>(c.server.max_queued_runs) + 4;
}

}  // namespace

McpServer::McpServer(const config::Config& config, runtimes::CodeExecutor& executor, gateway::Gateway* gateway)
    : config_(config), catalog_(executor, config_), pool_(PoolSize(config_)) {
  tools_.push_back(std::make_unique<RunCodeTool>(catalog_));
  tools_.push_back(std::make_unique<ListLanguagesTool>(catalog_));
  // Code mode is offered when there is something to call: at least one
  // connector configured (mcpServers) and codeMode.enabled not false.
  if (gateway != nullptr && !gateway->connector_names().empty()) {
    // The caller validated the section (serve refuses a bad config).
    StatusOr<codemode::Settings> settings = codemode::SettingsFromJson(config_.code_mode);
    if (settings.ok() && settings->enabled) {
      code_mode_ = true;
      tools_.push_back(std::make_unique<ExecuteTool>(*gateway, executor, settings->limits, 1u << 20));
      tools_.push_back(std::make_unique<SearchToolsTool>(*gateway));
      tools_.push_back(std::make_unique<DescribeToolTool>(*gateway));
    }
  }
}

McpServer::~McpServer() = default;

std::shared_ptr<Session> McpServer::NewSession(std::shared_ptr<ReplyChannel> standalone) {
  auto session = std::make_shared<Session>(*this, std::move(standalone));
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
  nlohmann::json n = jsonrpc::MakeNotification("notifications/tools/list_changed", nullptr);
  for (const auto& s : LiveSessions()) {
    if (s->initialized()) s->SendStandalone(n);
  }
}

void McpServer::Broadcast(LogLevel level, const std::string& text) {
  nlohmann::json n = jsonrpc::MakeNotification(
      "notifications/message", {{"level", LogLevelName(level)}, {"logger", "airlock"}, {"data", text}});
  for (const auto& s : LiveSessions()) {
    if (s->initialized()) s->SendStandalone(n);
  }
}

Tool* McpServer::FindTool(const std::string& name) const {
  for (const auto& t : tools_) {
    if (t->name() == name) return t.get();
  }
  return nullptr;
}

std::string McpServer::Instructions() {
  std::string langs;
  for (const runtimes::LanguageInfo& l : catalog_.Languages()) langs += (langs.empty() ? "" : ", ") + l.name;
  return "Airlock runs untrusted code in an isolated Linux sandbox (no network, nothing persists "
         "between calls). Use run_code to execute a program" +
         (langs.empty() ? std::string() : " in " + langs) +
         " and get stdout, stderr, exit status and produced files (images are returned as "
         "images). Use list_languages or the airlock://languages resource for versions, "
         "preinstalled libraries and limits." +
         (code_mode_ ? std::string(" To use the tools of the MCP servers airlock is connected to, find them with "
                                   "search_tools, read their schema with describe_tool, and call them from a short "
                                   "JavaScript or Python program with execute (many calls in one step).")
                     : std::string());
}

}  // namespace airlock::mcp
