#include "mcp/access.h"

#include "base/encoding.h"

namespace airlock::mcp {

std::set<std::string> Access::VisibleConnectors(const governance::Caller& caller) const {
  std::set<std::string> out;
  if (gateway_ == nullptr) return out;
  for (const std::string& c : gateway_->connector_names()) {
    if (policy_.SeesConnector(caller, endpoint_, c)) out.insert(c);
  }
  return out;
}

gateway::ToolFilter Access::ToolFilter(const governance::Caller& caller) const {
  return [this, caller](const gateway::ToolEntry& e) { return policy_.SeesTool(caller, endpoint_, e.connector, e.name); };
}

gateway::ToolFilter Access::CallableFilter(const governance::Caller& caller) const {
  return [this, caller](const gateway::ToolEntry& e) {
    return policy_.SeesTool(caller, endpoint_, e.connector, e.name) &&
           (e.read_only || policy_.MayWrite(caller, e.connector));
  };
}

StatusOr<codemode::Grants> Access::InlineGrants(const governance::Caller& caller,
                                                const nlohmann::json& requested) const {
  codemode::Grants grants;
  const std::set<std::string> visible = VisibleConnectors(caller);
  if (requested.is_null()) {
    grants.connectors = visible;
  } else {
    if (!requested.is_array()) return InvalidArgument("connectors must be an array of strings");
    for (const nlohmann::json& c : requested) {
      if (!c.is_string()) return InvalidArgument("connectors must be an array of strings");
      const std::string name = c.get<std::string>();
      if (!visible.count(name)) {
        std::string available;
        for (const std::string& a : visible) available += (available.empty() ? "" : ", ") + a;
        return NotFound("unknown connector \"" + SanitizeUtf8(name.substr(0, 64)) +
                        "\"; available: " + (available.empty() ? "none" : available));
      }
      grants.connectors.insert(name);
    }
  }
  grants.tool_filter = ToolFilter(caller);
  return grants;
}

}  // namespace airlock::mcp
