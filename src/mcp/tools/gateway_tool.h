// Gateway mode: one downstream connector tool offered directly as an MCP
// tool named "connector.tool" (endpoints with "gateway": true). Only tools
// the caller's role sees are listed, write tools only where the role may
// write; calls are re-checked, validated against the input schema, forwarded
// with the connector's timeout, and written to the audit log as one call row.
#ifndef AIRLOCK_MCP_TOOLS_GATEWAY_TOOL_H_
#define AIRLOCK_MCP_TOOLS_GATEWAY_TOOL_H_

#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "gateway/gateway.h"
#include "mcp/access.h"
#include "mcp/tools/tool.h"

namespace airlock::mcp {

class GatewayTool : public Tool {
 public:
  // A result whose serialized value exceeds `max_result_bytes` (code mode's
  // codeMode.limits.max_result_bytes, 1 MiB by default) is withheld: the
  // caller gets an E_LIMIT_RESULT tool error and the audit row says so.
  GatewayTool(gateway::Gateway& gateway, const Access& access, audit::AuditLog* audit, gateway::ToolEntry entry,
              uint64_t max_result_bytes)
      : gateway_(gateway), access_(access), audit_(audit), entry_(std::move(entry)), max_result_bytes_(max_result_bytes) {}

  std::string name() const override { return entry_.name; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  gateway::Gateway& gateway_;
  const Access& access_;
  audit::AuditLog* audit_;
  const gateway::ToolEntry entry_;
  const uint64_t max_result_bytes_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_GATEWAY_TOOL_H_
