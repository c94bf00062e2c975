// The `execute` tool (code mode): runs a short JavaScript or Python program
// in the jail with one global, `tools`, whose search/describe/call go through
// the governed bridge (codemode::BridgeSession) to the gateway's connectors.
//
//   execute {language: "javascript"|"python", code, connectors?: [names],
//            limits?: {wall_ms, max_calls, ...},      (limits may only be lowered)
//            session_id?: "s_..."}
// With session_id (a session opened with open_session {mode: "codemode"}),
// the program is a cell of that session: its variables persist to the next
// cell, the value is the last expression's (null when it has no JSON form),
// and the cell's bridge is open only while it runs; governance, limits and
// audit (kind "session") apply per cell. Extra errors: E_SESSION_NOT_FOUND,
// E_SESSION_LOST (then also "session_lost": why), E_SESSION_BUSY.
//
// The result's structuredContent (always; isError when ok is false):
//   {"ok": true|false,
//    "result": <the program's return value as JSON, or null>,
//    "error": {"code": "E_...", "message": "...", "name"?: "TypeError"},   (only when !ok)
//    "stdout": "...", "stderr": "...", "console_truncated": false,
//    "calls": {"total": 3, "denied": 0,
//              "log": [{"seq", "op", "name", "decision", "error_code", "duration_ms"}]},
//    "language": "javascript", "wall_ms": 41, "limits": {...},
//    "unavailable": [{"connector", "error"}]}   (only when a declared connector is down)
// Error codes: the program's own ToolError/limit codes (E_LIMIT_*, E_TOOL_*,
// E_WRITE_NOT_ALLOWED, E_RESULT_NOT_JSON, E_BRIDGE_PROTOCOL...), E_PROGRAM_ERROR
// (an uncaught exception or syntax error; `name` says which), E_CANCELLED,
// E_UNAVAILABLE (no runner), E_INVALID_REQUEST (bad connectors or limits).
#ifndef AIRLOCK_MCP_TOOLS_EXECUTE_TOOL_H_
#define AIRLOCK_MCP_TOOLS_EXECUTE_TOOL_H_

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "codemode/bridge_session.h"
#include "codemode/limits.h"
#include "audit/audit_log.h"
#include "gateway/gateway.h"
#include "mcp/access.h"
#include "mcp/tools/program_run.h"
#include "mcp/tools/tool.h"
#include "runtimes/code_executor.h"
#include "sessions/session_registry.h"

namespace airlock::mcp {

class ExecuteTool : public Tool {
 public:
  // `admin_limits` are the configured maxima (config "codeMode.limits").
  // `access` decides what the caller sees; `audit` (may be null) records
  // the run. All must outlive the tool.
  ExecuteTool(gateway::Gateway& gateway, runtimes::CodeExecutor& executor, const Access& access,
              audit::AuditLog* audit, codemode::Limits admin_limits, uint64_t max_code_bytes);

  std::string name() const override { return "execute"; }
  nlohmann::json Definition() override;
  nlohmann::json DefinitionFor(const governance::Caller& caller) override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

  // Code-mode sessions (open_session mode "codemode"): `execute` with a
  // session_id runs the program as a cell of that session. Null: none.
  void UseSessions(sessions::SessionRegistry* sessions) { sessions_ = sessions; }

 private:
  nlohmann::json DefinitionWith(const std::set<std::string>& connectors);
  nlohmann::json BaseDefinition(const std::set<std::string>& connectors);  // with session_id
  // The program as a cell of session `id` (kind "session").
  StatusOr<nlohmann::json> RunInSession(const std::string& id, ProgramSpec spec, ToolCallContext& ctx);

  gateway::Gateway& gateway_;
  runtimes::CodeExecutor& executor_;
  const Access& access_;
  audit::AuditLog* audit_;
  const codemode::Limits admin_limits_;
  const uint64_t max_code_bytes_;
  sessions::SessionRegistry* sessions_ = nullptr;
};

// Builds the CallToolResult from what the run and its bridge session left.
// `deadline_passed`: the run's wall clock ran out before it ended.
nlohmann::json BuildExecuteResult(const std::string& language, const runtimes::RunResult& run,
                                  const codemode::BridgeSession& session, const codemode::Limits& limits,
                                  bool deadline_passed);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_EXECUTE_TOOL_H_
