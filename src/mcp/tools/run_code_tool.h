// The `run_code` tool: validates the arguments, runs them through the
// CodeExecutor with progress and cancellation, and formats the result.
#ifndef AIRLOCK_MCP_TOOLS_RUN_CODE_TOOL_H_
#define AIRLOCK_MCP_TOOLS_RUN_CODE_TOOL_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp/tools/languages.h"
#include "mcp/tools/tool.h"

namespace airlock::mcp {

class RunCodeTool : public Tool {
 public:
  explicit RunCodeTool(LanguageCatalog& catalog) : catalog_(catalog) {}

  std::string name() const override { return "run_code"; }
  // inputSchema's language enum and the description list the catalog's
  // current languages.
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

  static nlohmann::json InputSchema(const std::vector<runtimes::LanguageInfo>& languages,
                                    const config::LimitsConfig& limits);
  static std::string Description(const std::vector<runtimes::LanguageInfo>& languages,
                                 const config::LimitsConfig& limits);

 private:
  LanguageCatalog& catalog_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_RUN_CODE_TOOL_H_
