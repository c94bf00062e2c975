#include "mcp/tools/tool.h"

namespace airlock::mcp {

nlohmann::json ToolErrorResult(const std::string& text) {
  return {{"content", nlohmann::json::array({{{"type", "text"}, {"text", text}}})}, {"isError", true}};
}

}  // namespace airlock::mcp
