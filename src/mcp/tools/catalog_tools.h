// The gateway's catalog as plain MCP tools: `search_tools` and
// `describe_tool`. They answer what a code-mode program's tools.search and
// tools.describe answer, so a model can plan a program before it writes one.
//
//   search_tools {query, limit?}  -> {"tools":[{"name","summary","read_only"}],"truncated"}
//   describe_tool {name}          -> {"name","description","input_schema","signature","read_only"}
//
// Both see the tools of every enabled connector (roles narrow this later);
// an unknown name is a tool error, never a protocol error. A visible
// connector that is down (not connected, last attempt failed) is named with
// its cause: search_tools adds "unavailable": [{"connector", "error"}] and a
// text note, describe_tool's error names it when the name is one of its.
#ifndef AIRLOCK_MCP_TOOLS_CATALOG_TOOLS_H_
#define AIRLOCK_MCP_TOOLS_CATALOG_TOOLS_H_

#include <string>

#include <set>

#include <nlohmann/json.hpp>

#include "gateway/gateway.h"
#include "mcp/access.h"
#include "mcp/tools/tool.h"

namespace airlock::mcp {

class SearchToolsTool : public Tool {
 public:
  // What the caller sees is decided by `access` (must outlive the tool).
  SearchToolsTool(gateway::Gateway& gateway, const Access& access) : gateway_(gateway), access_(access) {}
  std::string name() const override { return "search_tools"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  gateway::Gateway& gateway_;
  const Access& access_;
};

class DescribeToolTool : public Tool {
 public:
  // What the caller sees is decided by `access` (must outlive the tool).
  DescribeToolTool(gateway::Gateway& gateway, const Access& access) : gateway_(gateway), access_(access) {}
  std::string name() const override { return "describe_tool"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  gateway::Gateway& gateway_;
  const Access& access_;
};

// {"content":[{"type":"text","text":<value as JSON>}],"structuredContent":value}
nlohmann::json StructuredResult(const nlohmann::json& value);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_CATALOG_TOOLS_H_
