// Session's modern-era front (protocol 2026-07-28): no handshake, every
// request stands alone with its _meta. See modern.h and session.h.
#include <variant>

#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp/tools/tool.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

// The resulting response in the modern shape: results complete (resultType,
// serverInfo), errors without a null id.
json Modernize(json response) {
  if (response.contains("result")) return modern::CompleteResult(response["id"], std::move(response["result"]));
  return modern::ModernizeError(std::move(response));
}

json Cacheable(json response, int64_t ttl_ms, const char* scope) {
  response = Modernize(std::move(response));
  modern::AddCacheHints(response, ttl_ms, scope);
  return response;
}

}  // namespace

void Session::UseModernEra(bool ephemeral_identity) {
  std::lock_guard<std::mutex> lock(mu_);
  era_ = Era::kModern;
  ephemeral_identity_ = ephemeral_identity;
}

Session::Era Session::era() const {
  std::lock_guard<std::mutex> lock(mu_);
  return era_;
}

Session::Era Session::DecideEra(const protocol::jsonrpc::Message& m) {
  std::lock_guard<std::mutex> lock(mu_);
  // Only a request decides (a stray notification before it does not), and
  // only once: a legacy connection stays legacy whatever it sends later.
  if (era_ == Era::kUndetermined && m.kind == protocol::jsonrpc::Kind::kRequest && modern::LooksModern(m)) {
    era_ = Era::kModern;
  }
  return era_;
}

void Session::HandleModern(const protocol::jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply) {
  auto finish = [&](json response) { reply->Finish(&response); };
  if (m.kind == protocol::jsonrpc::Kind::kNotification) {
    HandleNotification(m);  // notifications/cancelled (stdio's cancellation)
    reply->Finish(nullptr);
    return;
  }
  if (closed()) return finish(modern::MakeError(m.id, protocol::jsonrpc::kInvalidRequest, "Session closed"));
  if (m.method == "initialize") {
    // The connection already speaks the modern era (stdio: its first request
    // chose it); the legacy handshake cannot start halfway. The method does
    // not exist in this era: -32601 (HTTP 404), as the conformance suite expects.
    return finish(modern::MakeError(
        m.id, protocol::jsonrpc::kMethodNotFound,
        std::string("This connection uses protocol ") + modern::kLatestModernVersion +
            " (per-request _meta, no initialize); start a new connection with initialize to use a legacy version",
        {{"supported", modern::SupportedVersions()}}));
  }
  std::variant<modern::RequestMeta, modern::Error> read = modern::ReadRequestMeta(m.params);
  if (auto* error = std::get_if<modern::Error>(&read)) return finish(modern::MakeError(m.id, *error));
  const modern::RequestMeta& meta = std::get<modern::RequestMeta>(read);

  Scope scope;
  scope.modern = true;
  scope.version = meta.protocol_version;
  scope.caller = caller();
  if (!meta.client.empty()) scope.caller.client = meta.client;
  scope.log_level = meta.log_level;
  scope.traceparent = meta.traceparent;
  scope.tracestate = meta.tracestate;

  if (m.method == "server/discover") {
    return finish(Cacheable(Discover(m), modern::kDiscoverTtlMs, "public"));
  }
  if (m.method == "tools/list") {
    // Per caller (role, endpoint): never shared across credentials.
    return finish(Cacheable(ListTools(m, scope.caller, /*sorted=*/true), modern::kToolsListTtlMs, "private"));
  }
  if (m.method == "tools/call") {
    bool ephemeral;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ephemeral = ephemeral_identity_;
    }
    if (ephemeral && m.params.is_object() && m.params.value("name", json()) == "open_session") {
      return finish(modern::CompleteResult(
          m.id, ToolErrorResult("E_SESSION_NEEDS_IDENTITY: code sessions belong to the caller's credential, and "
                                "this anonymous request has none (protocol " +
                                std::string(modern::kLatestModernVersion) +
                                " has no MCP session to own them). Use an API key, or the legacy protocol "
                                "(initialize), to open code sessions.")));
    }
    // The Tasks extension: a long run_code/execute may answer with a task
    // (not for an anonymous per-request identity: nobody could poll it).
    if (!ephemeral && MaybeStartTask(m, meta, scope, reply)) return;
    return StartToolCall(m, std::move(reply), std::move(scope));
  }
  if (m.method == "tasks/get" || m.method == "tasks/cancel" || m.method == "tasks/update") {
    return finish(TaskRequest(m, meta, scope.caller));
  }
  if (m.method == "subscriptions/listen") return Listen(m, std::move(reply));
  // The languages resource is the same for every caller of the endpoint.
  if (m.method == "resources/list") return finish(Cacheable(ListResources(m), modern::kResourcesTtlMs, "public"));
  if (m.method == "resources/read") {
    // -32002 is retired in this era: an unknown resource is invalid params.
    return finish(Cacheable(ReadResource(m, protocol::jsonrpc::kInvalidParams), modern::kResourcesTtlMs, "public"));
  }
  if (m.method == "resources/templates/list") {
    return finish(Cacheable(protocol::jsonrpc::MakeResult(m.id, {{"resourceTemplates", json::array()}}), modern::kResourcesTtlMs,
                            "public"));
  }
  finish(modern::MakeError(m.id, protocol::jsonrpc::kMethodNotFound, "Method not found: " + m.method));
}

void Session::Listen(const protocol::jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply) {
  auto fail = [&](int code, const std::string& message, json data = nullptr) {
    json response = modern::MakeError(m.id, code, message, data);
    reply->Finish(&response);
  };
  const json notifications = m.params.value("notifications", json::object());
  if (!notifications.is_object()) return fail(protocol::jsonrpc::kInvalidParams, "params.notifications: expected object");
  // notifications/tasks are never sent (clients poll tasks/get), so no
  // taskIds are acknowledged; asking for them without declaring the Tasks
  // extension is -32021, as the extension requires.
  if (server_.tasks() != nullptr && notifications.contains("taskIds")) {
    const json& meta = m.params.value("_meta", json::object());
    if (!DeclaresTasksExtension(meta.value(modern::kMetaClientCapabilities, json::object()))) {
      return fail(modern::kMissingRequiredClientCapability, "Missing required client capability",
                  {{"requiredCapabilities", {{"extensions", {{kTasksExtension, json::object()}}}}}});
    }
  }
  SubscriptionHub::Filter filter;
  filter.tools_list_changed = notifications.value("toolsListChanged", json(false)) == json(true);
  const governance::Caller who = caller();
  const std::string key = m.id.dump();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (listens_.count(key) || calls_.count(key)) {
      return fail(protocol::jsonrpc::kInvalidRequest, "Request id " + key + " is already in use");
    }
  }
  SubscriptionHub& hub = server_.subscriptions();
  StatusOr<uint64_t> handle = hub.Add(who.user + "\n" + who.key_id + "\n" + who.auth, reply, m.id, filter);
  if (!handle.ok()) {
    return fail(protocol::jsonrpc::kInvalidRequest, "Too many subscriptions: " + handle.status().message(),
                {{"perCaller", hub.limits().per_caller}, {"total", hub.limits().total}});
  }
  json acknowledged = json::object();
  if (filter.tools_list_changed) acknowledged["toolsListChanged"] = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) {
      hub.Remove(*handle);
      return fail(protocol::jsonrpc::kInvalidRequest, "Session closed");
    }
    // The acknowledgment comes first (the spec requires it): the listener
    // gets notifications only once activated after it.
    reply->Notify(protocol::jsonrpc::MakeNotification(
        "notifications/subscriptions/acknowledged",
        {{"_meta", {{modern::kMetaSubscriptionId, m.id}}}, {"notifications", acknowledged}}));
    listens_[key] = OpenListen{*handle, m.id, reply};
  }
  hub.Activate(*handle);
}

bool Session::EndListen(const std::string& key) {
  OpenListen listen;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = listens_.find(key);
    if (it == listens_.end()) return false;
    listen = std::move(it->second);
    listens_.erase(it);
  }
  server_.subscriptions().Remove(listen.handle);
  listen.reply->Finish(nullptr);
  return true;
}

void Session::EndListens() {
  std::map<std::string, OpenListen> listens;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listens.swap(listens_);
  }
  for (auto& [key, listen] : listens) {
    server_.subscriptions().Remove(listen.handle);
    json result = {{"_meta", {{modern::kMetaSubscriptionId, listen.id}}}};
    json response = modern::CompleteResult(listen.id, std::move(result));
    listen.reply->Finish(&response);
  }
}

json Session::Discover(const protocol::jsonrpc::Message& m) {
  json capabilities = {{"tools", {{"listChanged", true}}}, {"logging", json::object()}, {"resources", json::object()}};
  // The Tasks extension (docs/mcp.md "Tasks"): an empty object is support.
  if (server_.tasks() != nullptr) capabilities["extensions"] = {{kTasksExtension, json::object()}};
  return protocol::jsonrpc::MakeResult(m.id, {{"supportedVersions", modern::SupportedVersions()},
                                    {"capabilities", std::move(capabilities)},
                                    {"instructions", server_.Instructions()}});
}

}  // namespace airlock::mcp
