// One approved code tool (codetools/code_tool_store.h) offered as an ordinary
// MCP tool: its name, description and input schema are the proposal's; its
// annotations are computed (readOnlyHint only if everything it may call is
// read). Calling it runs the stored program with `args` bound to the call's
// arguments (validated against the input schema first).
//
// Rights at call time (research codemode.md §7 G4):
//   connectors  declared ∩ endpoint ∩ the role's (the caller's role; for a
//               definer tool, the definer role the approving admin chose)
//   tools       the declared tool patterns ∩ the role's patterns
//   writes      only with allow_write, and only on connectors the role may write
// The version is re-read and its hash re-checked on every call: a version
// revoked, superseded or edited since it was listed is refused.
#ifndef AIRLOCK_MCP_TOOLS_CODE_TOOL_TOOL_H_
#define AIRLOCK_MCP_TOOLS_CODE_TOOL_TOOL_H_

#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "codemode/limits.h"
#include "codetools/code_tool_store.h"
#include "gateway/gateway.h"
#include "mcp/access.h"
#include "mcp/tools/tool.h"
#include "runtimes/code_executor.h"

namespace airlock::mcp {

// Everything a code tool needs from the server; outlives the tools.
struct CodeToolDeps {
  gateway::Gateway* gateway = nullptr;
  runtimes::CodeExecutor* executor = nullptr;
  const Access* access = nullptr;
  audit::AuditLog* audit = nullptr;
  codetools::CodeToolStore* store = nullptr;
  codemode::Limits admin_limits;
};

class CodeToolTool : public Tool {
 public:
  CodeToolTool(const CodeToolDeps& deps, codetools::CodeTool version) : deps_(deps), version_(std::move(version)) {}

  std::string name() const override { return version_.proposal.name; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

  // The caller may see this tool: its role sees the code tool's name and,
  // for an invoker tool, every declared connector.
  static bool VisibleTo(const Access& access, const governance::Caller& caller, const codetools::CodeTool& t);

 private:
  const CodeToolDeps& deps_;
  const codetools::CodeTool version_;
};

// The program actually run: `code` after a one-line prologue that binds
// `args` (JavaScript: const args = ...; Python: args = ...).
std::string WithArgsPrologue(const std::string& language, const std::string& code, const nlohmann::json& args);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_CODE_TOOL_TOOL_H_
