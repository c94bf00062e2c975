// Session's part of the MCP Tasks extension (io.modelcontextprotocol/tasks):
// a tools/call answered with a CreateTaskResult, and tasks/get,
// tasks/cancel, tasks/update. The tasks themselves (store, runs, policy)
// belong to the server's TaskManager (task_manager.h), not to the session:
// a task outlives the request, and the HTTP client, that created it.
#include "audit/audit_log.h"
#include "base/encoding.h"
#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp/task_manager.h"
#include "mcp/tools/tool.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

// -32021 naming the extension (the extension's "Capability Negotiation").
json MissingCapability(const json& id) {
  return modern::MakeError(id, modern::kMissingRequiredClientCapability, "Missing required client capability",
                           {{"requiredCapabilities", {{"extensions", {{kTasksExtension, json::object()}}}}}});
}

}  // namespace

bool Session::MaybeStartTask(const protocol::jsonrpc::Message& m, const modern::RequestMeta& meta, const Scope& scope,
                             const std::shared_ptr<ReplyChannel>& reply) {
  TaskManager* tasks = server_.tasks();
  if (tasks == nullptr || !DeclaresTasksExtension(meta.client_capabilities) || closed()) return false;
  const json& p = m.params;
  if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) return false;
  json args = p.value("arguments", json::object());
  if (args.is_null()) args = json::object();
  if (!args.is_object()) return false;
  const std::string name = p["name"].get<std::string>();
  if (!tasks->Wants(name, args)) return false;
  // Unknown and forbidden: the blocking path answers (and audits) them.
  std::shared_ptr<Tool> tool = server_.FindToolFor(scope.caller, name);
  if (tool == nullptr) return false;

  auto finish = [&](json response) { reply->Finish(&response); };
  const std::string run_id = audit::NewRunId();
  if (Status st = server_.AuditToolCall(scope.caller, run_id, name, args, "allowed",
                                        {scope.traceparent, scope.tracestate});
      !st.ok()) {
    finish(modern::CompleteResult(m.id, ToolErrorResult("E_AUDIT_UNAVAILABLE: the audit log cannot be written, so "
                                                        "airlock refuses to run tools (" + st.message() + ")")));
    return true;
  }
  StatusOr<json> task = tasks->Start(tool, std::move(args), scope.caller, run_id, scope.version);
  if (!task.ok()) {
    const Status& st = task.status();
    std::string text = st.message();
    if (st.code() == StatusCode::kResourceExhausted) {
      text = "E_TASK_LIMIT: " + st.message() + "; wait for one to finish or cancel one (tasks/cancel)";
    }
    finish(modern::CompleteResult(m.id, ToolErrorResult(text)));
    return true;
  }
  json response = modern::CompleteResult(m.id, std::move(*task));
  response["result"]["resultType"] = "task";
  finish(std::move(response));
  return true;
}

json Session::TaskRequest(const protocol::jsonrpc::Message& m, const modern::RequestMeta& meta, const governance::Caller& who) {
  TaskManager* tasks = server_.tasks();
  if (tasks == nullptr) return modern::MakeError(m.id, protocol::jsonrpc::kMethodNotFound, "Method not found: " + m.method);
  if (!DeclaresTasksExtension(meta.client_capabilities)) return MissingCapability(m.id);
  if (!m.params.is_object() || !m.params.contains("taskId") || !m.params["taskId"].is_string()) {
    return modern::MakeError(m.id, protocol::jsonrpc::kInvalidParams, "params.taskId: expected string");
  }
  const std::string id = m.params["taskId"].get<std::string>();
  // Another caller's task is answered exactly like an unknown one.
  if (m.method == "tasks/get") {
    StatusOr<json> task = tasks->Get(id, who);
    if (!task.ok()) return modern::MakeError(m.id, protocol::jsonrpc::kInvalidParams, "Failed to retrieve task: Task not found");
    return modern::CompleteResult(m.id, std::move(*task));
  }
  if (m.method == "tasks/cancel") {
    if (!tasks->Cancel(id, who).ok()) {
      return modern::MakeError(m.id, protocol::jsonrpc::kInvalidParams, "Failed to cancel task: Task not found");
    }
    return modern::CompleteResult(m.id, json::object());
  }
  // tasks/update: airlock's tasks never ask for input, so every response is
  // for a key that is not outstanding and is ignored (the extension says so).
  if (!tasks->Get(id, who).ok()) {
    return modern::MakeError(m.id, protocol::jsonrpc::kInvalidParams, "Failed to update task: Task not found");
  }
  return modern::CompleteResult(m.id, json::object());
}

}  // namespace airlock::mcp
