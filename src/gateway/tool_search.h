// Ranked keyword search over tools, and their one-line summaries.
//
// Text is split into tokens at every non-alphanumeric byte and at camelCase
// boundaries, and lower-cased (ASCII) — for ranking only; tool names are
// always compared elsewhere as exact bytes. Each query term scores the best
// match in each field, weighted name > parameter names > description
// (exact token > prefix > substring of the name); a query equal to the
// tool's own name scores a bonus. Tools scoring 0 are left out; ties are
// broken by name.
#ifndef AIRLOCK_GATEWAY_TOOL_SEARCH_H_
#define AIRLOCK_GATEWAY_TOOL_SEARCH_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::gateway {

std::vector<std::string> Tokenize(std::string_view text);

// The first line, then the first sentence of it, cut to `max_bytes` (UTF-8
// safe, with "..." when cut).
std::string OneLineSummary(std::string_view description, size_t max_bytes = 120);

// Top-level property names of an object schema.
std::vector<std::string> ParameterNames(const nlohmann::json& input_schema);

struct SearchDocument {
  std::string name;         // qualified "connector.tool"
  std::string tool;         // the tool's own name
  std::string description;
  std::vector<std::string> parameters;
};

// 0 if nothing matches. An empty query matches everything with score 1.
double ScoreTool(const std::vector<std::string>& query_terms, std::string_view raw_query,
                 const SearchDocument& doc);

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_TOOL_SEARCH_H_
