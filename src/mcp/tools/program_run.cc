#include "mcp/tools/program_run.h"

#include <algorithm>
#include <chrono>

#include "base/encoding.h"
#include "codemode/bridge_frames.h"
#include "mcp/tools/catalog_tools.h"
#include "mcp/tools/execute_tool.h"
#include "mcp/tools/session_tools.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

audit::CallRow RowOf(const std::string& run_id, const codemode::CallRecord& c) {
  audit::CallRow row;
  row.run_id = run_id;
  row.seq = static_cast<int64_t>(c.seq);
  row.connector = c.connector;
  row.tool = c.op == "call" ? c.tool : c.op + ":" + c.name;  // search/describe keep their query/name
  if (c.op == "call" && c.tool.empty()) row.tool = c.name;
  row.effective_class = c.effective_class;
  row.decision = c.decision;
  row.reason = c.reason;
  row.args_sha256 = c.args_sha256;
  row.args_redacted = c.args_redacted.is_null() ? json::object() : c.args_redacted;
  if (c.decision == "denied") {
    row.result_status = "denied";
  } else if (c.error_code.empty()) {
    row.result_status = "ok";
  } else if (c.error_code == "E_LIMIT_WALLCLOCK" || c.error_code == "E_CANCELLED") {
    row.result_status = "timeout";
  } else {
    row.result_status = "is_error";
  }
  row.result_bytes = static_cast<int64_t>(c.result_bytes);
  row.duration_ms = static_cast<int64_t>(c.duration_ms);
  return row;
}

}  // namespace

std::string CodeModeTierOf(const std::string& language) { return language == "javascript" ? "wasm" : "native"; }

std::string CodeModeTierRefusal(const governance::Endpoint& endpoint, const std::string& language) {
  const std::string tier = CodeModeTierOf(language);
  if (std::find(endpoint.isolation.begin(), endpoint.isolation.end(), tier) != endpoint.isolation.end()) return "";
  return language + " programs run in the " + tier + " tier, which this endpoint does not allow; use javascript";
}

std::string AuditStatusOf(const std::string& code) {
  if (code.empty()) return "SUCCESS";
  if (code == "E_LIMIT_WALLCLOCK") return "TIMEOUT";
  if (code.rfind("E_LIMIT_", 0) == 0) return "LIMIT";
  if (code == "E_CANCELLED") return "CANCELLED";
  if (code == "E_TOOL_NOT_DECLARED" || code == "E_WRITE_NOT_ALLOWED" || code == "E_FORBIDDEN") return "DENIED";
  return "ERROR";
}

json CodeModeErrorResult(const std::string& code, const std::string& message, json extra) {
  json value = extra.is_object() ? std::move(extra) : json::object();
  value["ok"] = false;
  value["result"] = nullptr;
  value["error"] = {{"code", code}, {"message", message}};
  json out = StructuredResult(value);
  out["content"][0]["text"] = code + ": " + message;
  out["isError"] = true;
  return out;
}

json RunProgram(gateway::Gateway& gateway, runtimes::CodeExecutor& executor, audit::AuditLog* audit,
                const ProgramSpec& spec, ToolCallContext& ctx) {
  const auto started = std::chrono::steady_clock::now();
  const int64_t started_ms = audit::NowMs();
  runtimes::RunRequest request;
  request.language = spec.language;
  request.code = spec.code;
  request.code_mode = true;
  request.caller = SessionOwner(ctx.caller());  // per-caller run limits
  request.timeout_ms = spec.limits.wall_ms;
  request.memory_mb = spec.limits.memory_mb;
  request.max_output_bytes = spec.limits.max_console_bytes;
  request.truncate_output = true;
  if (!spec.session_id.empty()) {
    request.session_id = spec.session_id;
    request.memory_mb = 0;  // the session's, fixed when it opened
  }

  codemode::BridgeSession session(gateway, spec.grants, spec.limits,
                                  started + std::chrono::milliseconds(spec.limits.wall_ms));
  runtimes::RunResult run = executor.Run(request, nullptr, ctx.cancel(), &session);
  session.Close();
  if (spec.on_run) spec.on_run(run);
  const bool deadline_passed =
      std::chrono::steady_clock::now() >= started + std::chrono::milliseconds(spec.limits.wall_ms);
  json out = BuildExecuteResult(spec.language, run, session, spec.limits, deadline_passed);
  // A declared connector that is down: its tools were missing or failed;
  // say which and why next to whatever the program made of it.
  if (const std::vector<gateway::Gateway::Unavailable> down = gateway.UnavailableConnectors(&spec.grants.connectors);
      !down.empty()) {
    out["structuredContent"]["unavailable"] = gateway::Gateway::ToJson(down);
    out["content"].push_back({{"type", "text"}, {"text", "Note: " + gateway::Gateway::Describe(down)}});
  }
  const json& value = out["structuredContent"];
  const std::string error_code = value.contains("error") ? value["error"].value("code", std::string()) : "";

  if (audit != nullptr && audit->enabled()) {
    const governance::Caller& who = ctx.caller();
    audit::RunRecord rec;
    rec.run_id = ctx.run_id();
    rec.started_at = started_ms;
    rec.ended_at = audit::NowMs();
    rec.duration_ms = rec.ended_at - rec.started_at;
    rec.user = who.user;
    rec.role = who.role;
    rec.endpoint = who.endpoint;
    rec.client = who.client;
    rec.kind = spec.kind;
    rec.tool_version_hash = spec.tool_version_hash;
    rec.language = spec.language;
    rec.code = spec.audited_code.empty() ? spec.code : spec.audited_code;
    rec.code_sha256 = Sha256Hex(rec.code);
    rec.connectors = json(spec.grants.connectors);
    rec.limits = spec.limits.ToJson();
    if (!spec.tool_name.empty()) rec.limits["code_tool"] = spec.tool_name;
    if (!spec.session_id.empty()) rec.limits["session_id"] = spec.session_id;
    rec.status = AuditStatusOf(error_code);
    rec.error_code = error_code;
    rec.calls_total = session.calls_total();
    rec.calls_denied = session.calls_denied();
    rec.console_bytes = static_cast<int64_t>(run.stdout_text.size() + run.stderr_text.size());
    rec.result_bytes = value.contains("result") ? static_cast<int64_t>(codemode::Dump(value["result"]).size()) : 0;
    std::vector<audit::CallRow> rows;
    for (const codemode::CallRecord& c : session.calls()) rows.push_back(RowOf(rec.run_id, c));
    Status st = audit->EndRun(rec, rows);
    if (!st.ok()) {
      return CodeModeErrorResult("E_AUDIT_UNAVAILABLE",
                                 "the run finished but its audit record could not be written, so its result is "
                                 "withheld: " + st.message());
    }
  }
  return out;
}

}  // namespace airlock::mcp
