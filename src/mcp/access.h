// What one caller may see and do on one endpoint: the policy (roles,
// governance/policy.h) applied to the gateway's catalog. The tools of the MCP
// server ask it; it makes every access decision in one place.
//
//   Access access(policy, endpoint, gateway);
//   gateway::ToolFilter f = access.ToolFilter(caller);       // search_tools, describe_tool
//   StatusOr<codemode::Grants> g = access.InlineGrants(caller, requested);  // execute
#ifndef AIRLOCK_MCP_ACCESS_H_
#define AIRLOCK_MCP_ACCESS_H_

#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "codemode/bridge_session.h"
#include "gateway/gateway.h"
#include "governance/policy.h"

namespace airlock::mcp {

class Access {
 public:
  // All three must outlive the Access object.
  Access(const governance::Policy& policy, const governance::Endpoint& endpoint, gateway::Gateway* gateway)
      : policy_(policy), endpoint_(endpoint), gateway_(gateway) {}

  const governance::Policy& policy() const { return policy_; }
  const governance::Endpoint& endpoint() const { return endpoint_; }
  // nullptr for an undefined role.
  const governance::Role* RoleOf(const governance::Caller& caller) const { return policy_.FindRole(caller.role); }

  // Connectors the caller sees on this endpoint (configured ones only).
  std::set<std::string> VisibleConnectors(const governance::Caller& caller) const;
  // The caller sees the tool (endpoint + role connectors and tool patterns).
  gateway::ToolFilter ToolFilter(const governance::Caller& caller) const;
  // The caller may also call it directly (gateway mode): read, or a write
  // tool on a connector the role may write to.
  gateway::ToolFilter CallableFilter(const governance::Caller& caller) const;

  // Grants for an inline program: `requested` connectors (null/absent: every
  // visible one) ∩ visible; never any write. A requested connector the caller
  // cannot see is reported exactly like one that does not exist.
  StatusOr<codemode::Grants> InlineGrants(const governance::Caller& caller, const nlohmann::json& requested) const;

 private:
  const governance::Policy& policy_;
  const governance::Endpoint& endpoint_;
  gateway::Gateway* gateway_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_ACCESS_H_
