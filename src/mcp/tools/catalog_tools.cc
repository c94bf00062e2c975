#include "mcp/tools/catalog_tools.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

json ReadOnlyAnnotations(const std::string& title) {
  return {{"title", title},
          {"readOnlyHint", true},
          {"destructiveHint", false},
          {"idempotentHint", true},
          {"openWorldHint", false}};
}

}  // namespace

json StructuredResult(const json& value) {
  return {{"content", json::array({{{"type", "text"}, {"text", value.dump(2, ' ', false, json::error_handler_t::replace)}}})},
          {"structuredContent", value}};
}

json SearchToolsTool::Definition() {
  return {
      {"name", name()},
      {"title", "Search tools"},
      {"description",
       "Search the tools of the MCP servers airlock is connected to (by name, description and parameter "
       "names). Returns ranked one-line summaries; use describe_tool for a tool's full input schema, and "
       "`execute` to call tools from a program. Tool names are \"connector.tool\". An empty query lists "
       "tools by name."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"query", {{"type", "string"}, {"description", "Words to look for, e.g. \"create issue\"."}}},
          {"limit",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", gateway::kMaxSearchLimit},
            {"default", gateway::kDefaultSearchLimit}}}}},
        {"required", {"query"}},
        {"additionalProperties", false}}},
      {"annotations", ReadOnlyAnnotations("Search tools")}};
}

StatusOr<json> SearchToolsTool::Call(const json& arguments, ToolCallContext& ctx) {
  if (!arguments.is_object()) return InvalidArgument("arguments must be an object");
  auto query = arguments.find("query");
  if (query == arguments.end() || !query->is_string()) return InvalidArgument("query must be a string");
  int limit = gateway::kDefaultSearchLimit;
  if (auto l = arguments.find("limit"); l != arguments.end() && !l->is_null()) {
    if (!l->is_number_integer() || l->get<int64_t>() < 1 || l->get<int64_t>() > gateway::kMaxSearchLimit) {
      return InvalidArgument("limit must be an integer from 1 to " + std::to_string(gateway::kMaxSearchLimit));
    }
    limit = static_cast<int>(l->get<int64_t>());
  }
  for (const auto& [key, value] : arguments.items()) {
    if (key != "query" && key != "limit") return InvalidArgument("unknown argument \"" + key + "\"");
  }
  const std::set<std::string> connectors = access_.VisibleConnectors(ctx.caller());
  json value = gateway_.Search(query->get<std::string>(), limit, access_.ToolFilter(ctx.caller()), &connectors).ToJson();
  // After the search (which tries to connect those never listed): a
  // connector that is down has no tools here, and the agent is told why
  // rather than left with an empty list.
  const std::vector<gateway::Gateway::Unavailable> down = gateway_.UnavailableConnectors(&connectors);
  if (down.empty()) return StructuredResult(value);
  value["unavailable"] = gateway::Gateway::ToJson(down);
  json out = StructuredResult(value);
  out["content"].push_back({{"type", "text"},
                            {"text", "Note: " + gateway::Gateway::Describe(down) +
                                         "; their tools are missing from these results."}});
  return out;
}

json DescribeToolTool::Definition() {
  return {{"name", name()},
          {"title", "Describe a tool"},
          {"description",
           "The full input schema and a TypeScript-style signature of one tool found with search_tools, "
           "e.g. describe_tool {\"name\": \"github.create_issue\"}. Whether it is read-only is shown too: "
           "code-mode programs may call read-only tools only."},
          {"inputSchema",
           {{"type", "object"},
            {"properties", {{"name", {{"type", "string"}, {"description", "\"connector.tool\""}}}}},
            {"required", {"name"}},
            {"additionalProperties", false}}},
          {"annotations", ReadOnlyAnnotations("Describe a tool")}};
}

StatusOr<json> DescribeToolTool::Call(const json& arguments, ToolCallContext& ctx) {
  if (!arguments.is_object()) return InvalidArgument("arguments must be an object");
  auto name = arguments.find("name");
  if (name == arguments.end() || !name->is_string()) return InvalidArgument("name must be a string");
  for (const auto& [key, value] : arguments.items()) {
    if (key != "name") return InvalidArgument("unknown argument \"" + key + "\"");
  }
  StatusOr<gateway::ToolDescription> d = gateway_.Describe(name->get<std::string>(), access_.ToolFilter(ctx.caller()));
  if (!d.ok()) {
    // Only a connector the caller may see is named (no existence leak).
    const std::string wanted = name->get<std::string>();
    std::set<std::string> connectors = access_.VisibleConnectors(ctx.caller());
    std::erase_if(connectors, [&](const std::string& c) { return wanted.rfind(c + ".", 0) != 0; });
    const std::vector<gateway::Gateway::Unavailable> down = gateway_.UnavailableConnectors(&connectors);
    return ToolErrorResult("tool \"" + wanted + "\" is not available" +
                           (down.empty() ? "; use search_tools to find tool names"
                                         : ": " + gateway::Gateway::Describe(down)));
  }
  return StructuredResult(d->ToJson());
}

}  // namespace airlock::mcp
