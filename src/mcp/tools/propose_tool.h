// `propose_code_tool` (inline endpoints, roles with `propose`): stores a
// proposed code tool and does nothing else. An admin reviews it with
// `airlock tools list|diff|approve|reject`; nobody approves their own.
//
//   propose_code_tool {name, description, language, code, input_schema?,
//                      connectors, tools?, limits?}
//   -> {"id": "ct_...", "name", "version", "hash", "status": "proposed"}
#ifndef AIRLOCK_MCP_TOOLS_PROPOSE_TOOL_H_
#define AIRLOCK_MCP_TOOLS_PROPOSE_TOOL_H_

#include <chrono>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "base/rate_window.h"
#include "codetools/code_tool_store.h"
#include "mcp/access.h"
#include "mcp/tools/tool.h"

namespace airlock::mcp {

class ProposeCodeToolTool : public Tool {
 public:
  // `reserved`: names a code tool may not take (the server's own tools).
  // At most `per_hour` proposals per user per hour (0: no cap); one over
  // is refused with E_RATE_LIMITED (and audited as denied).
  ProposeCodeToolTool(codetools::CodeToolStore& store, const Access& access, audit::AuditLog* audit,
                      std::set<std::string> reserved, uint32_t per_hour = 20)
      : store_(store), access_(access), audit_(audit), reserved_(std::move(reserved)),
        rate_(per_hour, std::chrono::hours(1)) {}

  std::string name() const override { return "propose_code_tool"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  codetools::CodeToolStore& store_;
  const Access& access_;
  audit::AuditLog* audit_;
  const std::set<std::string> reserved_;
  RateWindow rate_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_PROPOSE_TOOL_H_
