// Runs one code-mode program (an inline `execute` or a stored code tool):
// the jail with the governed bridge, the CallToolResult, and the audit
// record (one run row plus one row per bridge request, denied ones included).
//
//   ProgramSpec spec{.language = "python", .code = code, .grants = grants, .limits = limits,
//                    .kind = "inline"};
//   json result = RunProgram(gateway, executor, audit, spec, ctx);
//
// When the audit log cannot be written and it is fail-closed, the program's
// result is withheld: the caller gets isError with E_AUDIT_UNAVAILABLE.
#ifndef AIRLOCK_MCP_TOOLS_PROGRAM_RUN_H_
#define AIRLOCK_MCP_TOOLS_PROGRAM_RUN_H_

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "codemode/bridge_session.h"
#include "codemode/limits.h"
#include "gateway/gateway.h"
#include "governance/policy.h"
#include "mcp/tools/tool.h"
#include "runtimes/code_executor.h"

namespace airlock::mcp {

struct ProgramSpec {
  std::string language;  // "javascript" | "python"
  std::string code;      // what runs (a code tool's code with its `args` prologue)
  codemode::Grants grants;
  codemode::Limits limits;
  // For the audit log.
  std::string kind = "inline";    // "inline" | "code_tool"
  std::string tool_name;          // code tools
  std::string tool_version_hash;  // code tools: the approved hash
  std::string audited_code;       // the code as written (default: `code`)
  // A cell of this open code-mode session (execute with session_id): the
  // run goes to the session's interpreter (its memory is the session's),
  // with a bridge for this cell only; kind is "session".
  std::string session_id;
  // Called with the executor's result before anything is built from it
  // (the session registry notes a lost session).
  std::function<void(runtimes::RunResult&)> on_run;
};

nlohmann::json RunProgram(gateway::Gateway& gateway, runtimes::CodeExecutor& executor, audit::AuditLog* audit,
                          const ProgramSpec& spec, ToolCallContext& ctx);

// The isolation tier a code-mode language runs in: "wasm" for javascript
// (the embedded engine inside the jail, like the WASM tier's JavaScript),
// "native" for python (a process in the jail).
std::string CodeModeTierOf(const std::string& language);

// "" if `endpoint` allows `language`'s tier, else why not (for the caller).
std::string CodeModeTierRefusal(const governance::Endpoint& endpoint, const std::string& language);

// The audit status of a run from its error code ("" = SUCCESS): TIMEOUT,
// LIMIT, DENIED, CANCELLED or ERROR.
std::string AuditStatusOf(const std::string& error_code);

// {"content":[text], "structuredContent": {"ok": false, "error": {code, message}}, "isError": true}
nlohmann::json CodeModeErrorResult(const std::string& code, const std::string& message, nlohmann::json extra = {});

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_PROGRAM_RUN_H_
