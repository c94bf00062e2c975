#include "mcp/session.h"

#include <algorithm>
#include <limits>

#include "audit/audit_log.h"
#include "base/encoding.h"
#include "mcp/server.h"
#include "mcp/tools/tool.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using protocol::jsonrpc::Kind;
using protocol::jsonrpc::MakeError;
using protocol::jsonrpc::MakeResult;

constexpr size_t kPageSize = 100;
constexpr int kResourceNotFound = -32002;

// Reads an optional pagination cursor (the decimal offset we handed out).
bool ReadCursor(const json& params, size_t* offset, std::string* error) {
  *offset = 0;
  if (!params.is_object() || !params.contains("cursor") || params["cursor"].is_null()) return true;
  const json& c = params["cursor"];
  if (!c.is_string()) {
    *error = "params.cursor: expected string";
    return false;
  }
  const std::string s = c.get<std::string>();
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
    *error = "params.cursor: invalid cursor";
    return false;
  }
  *offset = std::stoul(s);
  return true;
}

}  // namespace

bool IsSupportedProtocolVersion(const std::string& version) {
  for (const char* v : kSupportedProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

// One tools/call in flight.
struct Session::Call {
  json id;
  Scope scope;
  std::string key;
  json progress_token;  // null: no progress wanted
  std::shared_ptr<ReplyChannel> reply;
  CancelToken cancel;
  std::string run_id;  // the audit log's id of this call
  std::mutex mu;
  bool cancelled = false;  // guarded by Session::mu_
  bool done = false;       // guarded by Session::mu_
  double last_progress = -std::numeric_limits<double>::infinity();  // guarded by mu
};

class Session::CallContext : public ToolCallContext {
 public:
  CallContext(Session& session, Call& call)
      : session_(session), call_(call), version_(call.scope.version), caller_(call.scope.caller) {}

  void Progress(double progress, std::optional<double> total, const std::string& message) override {
    if (call_.progress_token.is_null() || call_.cancel.cancelled()) return;
    std::lock_guard<std::mutex> lock(call_.mu);
    if (!(progress > call_.last_progress)) return;
    call_.last_progress = progress;
    json params = {{"progressToken", call_.progress_token}, {"progress", progress}};
    if (total) params["total"] = *total;
    if (!message.empty()) params["message"] = message;
    call_.reply->Notify(protocol::jsonrpc::MakeNotification("notifications/progress", std::move(params)));
  }

  void Log(LogLevel level, const std::string& text) override {
    if (call_.cancel.cancelled()) return;
    if (call_.scope.modern) {
      // Modern: the request's own _meta level; none means no log messages.
      if (!call_.scope.log_level || level < *call_.scope.log_level) return;
    } else if (!session_.ShouldLog(level)) {
      return;
    }
    call_.reply->Notify(protocol::jsonrpc::MakeNotification(
        "notifications/message", {{"level", LogLevelName(level)}, {"logger", "airlock"}, {"data", text}}));
  }

  CancelToken& cancel() override { return call_.cancel; }
  const std::string& protocol_version() const override { return version_; }
  const governance::Caller& caller() const override { return caller_; }
  const std::string& run_id() const override { return call_.run_id; }

 private:
  Session& session_;
  Call& call_;
  const std::string version_;
  const governance::Caller caller_;
};

Session::Session(McpServer& server, std::shared_ptr<ReplyChannel> standalone, governance::Caller caller)
    : server_(server), standalone_(std::move(standalone)), caller_(std::move(caller)) {}

governance::Caller Session::caller() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caller_;
}

Session::~Session() {
  for (const auto& [key, listen] : listens_) server_.subscriptions().Remove(listen.handle);
}

void Session::HandleText(std::string_view text, std::shared_ptr<ReplyChannel> reply) {
  protocol::jsonrpc::ParseOutcome parsed = protocol::jsonrpc::Parse(text);
  if (!parsed.message) {
    if (era() == Era::kModern) parsed.error_response = modern::ModernizeError(std::move(parsed.error_response));
    reply->Finish(&parsed.error_response);
    return;
  }
  Handle(*parsed.message, std::move(reply));
}

void Session::Handle(const protocol::jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply) {
  if (m.kind == Kind::kResponse) {  // airlock sends no requests; ignore
    reply->Finish(nullptr);
    return;
  }
  if (DecideEra(m) == Era::kModern) return HandleModern(m, std::move(reply));
  if (m.kind == Kind::kNotification) {
    HandleNotification(m);
    reply->Finish(nullptr);
    return;
  }
  if (m.method == "tools/call") {
    Scope scope;
    {
      std::lock_guard<std::mutex> lock(mu_);
      scope.version = protocol_version_;
      scope.caller = caller_;
    }
    StartToolCall(m, std::move(reply), std::move(scope));
    return;
  }
  json response = HandleRequest(m);
  reply->Finish(&response);
}

json Session::HandleRequest(const protocol::jsonrpc::Message& m) {
  if (m.method == "ping") return MakeResult(m.id, json::object());
  if (m.method == "initialize") return Initialize(m);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(m.id, protocol::jsonrpc::kInvalidRequest, "Session closed");
    if (!initialized_) {
      return MakeError(m.id, protocol::jsonrpc::kInvalidRequest, "Server not initialized: send initialize first");
    }
  }
  if (m.method == "logging/setLevel") return SetLevel(m);
  if (m.method == "tools/list") return ListTools(m, caller(), /*sorted=*/false);
  if (m.method == "resources/list") return ListResources(m);
  if (m.method == "resources/read") return ReadResource(m, kResourceNotFound);
  if (m.method == "resources/templates/list") {
    return MakeResult(m.id, {{"resourceTemplates", json::array()}});
  }
  if (m.method == "shutdown") {
    // Not in MCP; older clients send it before they exit. It means what it
    // says: the session's calls in flight are cancelled (and waited for),
    // and every later request is refused with "Session closed".
    Close();
    return MakeResult(m.id, json::object());
  }
  return MakeError(m.id, protocol::jsonrpc::kMethodNotFound, "Method not found: " + m.method);
}

void Session::HandleNotification(const protocol::jsonrpc::Message& m) {
  if (m.method == "notifications/cancelled") {
    if (m.params.is_object() && m.params.contains("requestId")) CancelRequest(m.params["requestId"]);
  }
  // notifications/initialized and anything else: nothing to do.
}

json Session::Initialize(const protocol::jsonrpc::Message& m) {
  const json& p = m.params;
  if (!p.is_object()) return MakeError(m.id, protocol::jsonrpc::kInvalidParams, "params: expected object");
  if (!p.contains("protocolVersion") || !p["protocolVersion"].is_string()) {
    return MakeError(m.id, protocol::jsonrpc::kInvalidParams, "params.protocolVersion: expected string");
  }
  if (p.contains("capabilities") && !p["capabilities"].is_object()) {
    return MakeError(m.id, protocol::jsonrpc::kInvalidParams, "params.capabilities: expected object");
  }
  if (p.contains("clientInfo") && !p["clientInfo"].is_object()) {
    return MakeError(m.id, protocol::jsonrpc::kInvalidParams, "params.clientInfo: expected object");
  }
  std::string requested = p["protocolVersion"].get<std::string>();
  std::string version = IsSupportedProtocolVersion(requested) ? requested : kLatestProtocolVersion;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(m.id, protocol::jsonrpc::kInvalidRequest, "Session closed");
    if (initialized_) return MakeError(m.id, protocol::jsonrpc::kInvalidRequest, "Session already initialized");
    initialized_ = true;
    era_ = Era::kLegacy;
    protocol_version_ = version;
    if (p.contains("clientInfo")) {
      const json& info = p["clientInfo"];
      auto text = [&](const char* key) {
        auto it = info.find(key);
        return it != info.end() && it->is_string() ? SanitizeUtf8(it->get<std::string>().substr(0, 64)) : "";
      };
      client_name_ = text("name");
      caller_.client = client_name_ + (text("version").empty() ? "" : "/" + text("version"));
    }
  }
  return MakeResult(m.id, {{"protocolVersion", version},
                           {"capabilities",
                            {{"tools", {{"listChanged", true}}},
                             {"logging", json::object()},
                             {"resources", json::object()}}},
                           {"serverInfo", {{"name", "airlock"}, {"title", "Airlock"}, {"version", AIRLOCK_VERSION}}},
                           {"instructions", server_.Instructions()}});
}

json Session::SetLevel(const protocol::jsonrpc::Message& m) {
  std::string name;
  if (m.params.is_object() && m.params.contains("level") && m.params["level"].is_string()) {
    name = m.params["level"].get<std::string>();
  }
  std::optional<LogLevel> level = LogLevelFromName(name);
  if (!level) {
    return MakeError(m.id, protocol::jsonrpc::kInvalidParams,
                     "params.level: expected one of debug, info, notice, warning, error, critical, alert, "
                     "emergency");
  }
  std::lock_guard<std::mutex> lock(mu_);
  level_ = *level;
  level_set_ = true;
  return MakeResult(m.id, json::object());
}

json Session::ListTools(const protocol::jsonrpc::Message& m, const governance::Caller& who, bool sorted) {
  size_t offset;
  std::string error;
  if (!ReadCursor(m.params, &offset, &error)) return MakeError(m.id, protocol::jsonrpc::kInvalidParams, error);
  std::vector<std::shared_ptr<Tool>> tools = server_.ToolsFor(who);
  if (sorted) {
    std::stable_sort(tools.begin(), tools.end(),
                     [](const std::shared_ptr<Tool>& a, const std::shared_ptr<Tool>& b) { return a->name() < b->name(); });
  }
  if (offset > tools.size()) return MakeError(m.id, protocol::jsonrpc::kInvalidParams, "params.cursor: invalid cursor");
  json list = json::array();
  size_t end = std::min(tools.size(), offset + kPageSize);
  for (size_t i = offset; i < end; ++i) list.push_back(tools[i]->DefinitionFor(who));
  json result = {{"tools", std::move(list)}};
  if (end < tools.size()) result["nextCursor"] = std::to_string(end);
  return MakeResult(m.id, std::move(result));
}

json Session::ListResources(const protocol::jsonrpc::Message& m) {
  size_t offset;
  std::string error;
  if (!ReadCursor(m.params, &offset, &error)) return MakeError(m.id, protocol::jsonrpc::kInvalidParams, error);
  json list = json::array();
  if (offset == 0) list.push_back(LanguagesResourceEntry());
  return MakeResult(m.id, {{"resources", std::move(list)}});
}

json Session::ReadResource(const protocol::jsonrpc::Message& m, int not_found_code) {
  if (!m.params.is_object() || !m.params.contains("uri") || !m.params["uri"].is_string()) {
    return MakeError(m.id, protocol::jsonrpc::kInvalidParams, "params.uri: expected string");
  }
  std::string uri = m.params["uri"].get<std::string>();
  if (uri != kLanguagesResourceUri) {
    return MakeError(m.id, not_found_code, "Resource not found", {{"uri", uri}});
  }
  return MakeResult(m.id, ReadLanguagesResource(server_.languages()));
}

void Session::StartToolCall(const protocol::jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply, Scope scope) {
  const bool modern = scope.modern;
  auto fail = [&](int code, const std::string& message) {
    json response = modern ? modern::MakeError(m.id, code, message) : MakeError(m.id, code, message);
    reply->Finish(&response);
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return fail(protocol::jsonrpc::kInvalidRequest, "Session closed");
    if (!initialized_ && !modern) {
      return fail(protocol::jsonrpc::kInvalidRequest, "Server not initialized: send initialize first");
    }
  }
  const json& p = m.params;
  if (!p.is_object()) return fail(protocol::jsonrpc::kInvalidParams, "params: expected object");
  if (!p.contains("name") || !p["name"].is_string()) return fail(protocol::jsonrpc::kInvalidParams, "params.name: expected string");
  json args = p.value("arguments", json());
  if (!args.is_null() && !args.is_object()) return fail(protocol::jsonrpc::kInvalidParams, "params.arguments: expected object");
  std::string name = p["name"].get<std::string>();
  const governance::Caller who = scope.caller;
  const std::string run_id = audit::NewRunId();
  // Unknown and forbidden are the same answer: a tool's existence never leaks.
  std::shared_ptr<Tool> tool = server_.FindToolFor(who, name);
  if (tool == nullptr) {
    (void)server_.AuditToolCall(who, run_id, name, args.is_null() ? json::object() : args, "denied",
                                {scope.traceparent, scope.tracestate});
    return fail(protocol::jsonrpc::kInvalidParams, "Unknown tool: " + SanitizeUtf8(name.substr(0, 128)));
  }

  auto call = std::make_shared<Call>();
  call->scope = std::move(scope);
  call->run_id = run_id;
  call->id = m.id;
  call->key = m.id.dump();
  call->reply = reply;
  if (p.contains("_meta") && p["_meta"].is_object() && p["_meta"].contains("progressToken")) {
    const json& token = p["_meta"]["progressToken"];
    if (!token.is_string() && !token.is_number_integer()) {
      return fail(protocol::jsonrpc::kInvalidParams, "params._meta.progressToken: expected string or integer");
    }
    call->progress_token = token;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!calls_.emplace(call->key, call).second) {
      return fail(protocol::jsonrpc::kInvalidRequest, "Request id " + call->key + " is already in use");
    }
  }
  if (Status st = server_.AuditToolCall(who, run_id, name, args.is_null() ? json::object() : args, "allowed",
                                        {call->scope.traceparent, call->scope.tracestate});
      !st.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.erase(call->key);
    }
    json response = ResultFor(*call, ToolErrorResult("E_AUDIT_UNAVAILABLE: the audit log cannot be written, so "
                                                      "airlock refuses to run tools (" + st.message() + ")"));
    reply->Finish(&response);
    return;
  }
  std::shared_ptr<Session> self = shared_from_this();
  bool submitted = server_.pool().TrySubmit([self, call, tool, args = std::move(args)] {
    self->RunToolCall(call, *tool, args);
  });
  if (!submitted) {
    FinishCall(call, ResultFor(*call, ToolErrorResult("Server busy: too many calls in progress; retry later.")));
  }
}

void Session::RunToolCall(const std::shared_ptr<Call>& call, Tool& tool, const json& args) {
  CallContext ctx(*this, *call);
  // Visible (and cancellable) to operators while it runs.
  RunTracker::Handle tracked = server_.runs().Begin(call->run_id, ctx.caller(), tool.name(), &call->cancel);
  StatusOr<json> result = tool.Call(args, ctx);
  if (result.ok()) {
    // The run's own status where the program ran (run_code), else ok/error
    // with the error code (run_tracker.h).
    tracked.SetOutcome(OutcomeOfToolResult(*result));
    return FinishCall(call, ResultFor(*call, std::move(*result)));
  }
  tracked.SetOutcome({.status = "protocol_error", .error_code = result.status().code() == StatusCode::kInvalidArgument
                                                                    ? "invalid_params"
                                                                    : "internal_error"});
  const Status& st = result.status();
  if (st.code() != StatusCode::kInvalidArgument) {
    return FinishCall(call, ErrorFor(*call, protocol::jsonrpc::kInternalError, st.message()));
  }
  // SEP-1303: from 2025-11-25 input validation errors are tool errors.
  if (call->scope.version >= std::string("2025-11-25")) {
    return FinishCall(call, ResultFor(*call, ToolErrorResult("Invalid arguments: " + st.message())));
  }
  FinishCall(call, ErrorFor(*call, protocol::jsonrpc::kInvalidParams, st.message()));
}

json Session::ResultFor(const Call& call, json result) const {
  return call.scope.modern ? modern::CompleteResult(call.id, std::move(result)) : MakeResult(call.id, std::move(result));
}

json Session::ErrorFor(const Call& call, int code, const std::string& message) const {
  return call.scope.modern ? modern::MakeError(call.id, code, message) : MakeError(call.id, code, message);
}

void Session::FinishCall(const std::shared_ptr<Call>& call, const json& response) {
  // The id leaves the table before the response is sent, so a client may
  // reuse it as soon as it has the response; Close() still waits for the
  // send (finishing_).
  bool cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled = call->cancelled;
    call->done = true;
    calls_.erase(call->key);
    ++finishing_;
  }
  call->reply->Finish(cancelled ? nullptr : &response);
  {
    std::lock_guard<std::mutex> lock(mu_);
    --finishing_;
  }
  calls_done_.notify_all();
}

bool Session::CancelRequest(const json& id) {
  if (!id.is_string() && !id.is_number_integer()) return false;
  if (EndListen(id.dump())) return true;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = calls_.find(id.dump());
  if (it == calls_.end() || it->second->done) return false;
  it->second->cancelled = true;
  it->second->cancel.Cancel();
  return true;
}

void Session::Close() {
  EndListens();
  std::unique_lock<std::mutex> lock(mu_);
  closed_ = true;
  for (auto& [key, call] : calls_) {
    if (!call->done) {
      call->cancelled = true;
      call->cancel.Cancel();
    }
  }
  calls_done_.wait(lock, [this] { return calls_.empty() && finishing_ == 0; });
}

void Session::SendStandalone(const json& notification) {
  if (!standalone_ || closed()) return;
  if (notification.value("method", std::string()) == "notifications/message") {
    std::optional<LogLevel> level = LogLevelFromName(notification["params"].value("level", std::string()));
    if (!level || !ShouldLog(*level)) return;
  }
  standalone_->Notify(notification);
}

bool Session::initialized() const {
  std::lock_guard<std::mutex> lock(mu_);
  return initialized_;
}

bool Session::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

std::string Session::protocol_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_version_;
}

size_t Session::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_.size() + finishing_;
}

bool Session::logging_requested() const {
  std::lock_guard<std::mutex> lock(mu_);
  return level_set_;
}

bool Session::ShouldLog(LogLevel level) const {
  std::lock_guard<std::mutex> lock(mu_);
  return level >= level_;
}

}  // namespace airlock::mcp
