// The `run_code` tool: validates the arguments, runs them through the
// CodeExecutor with progress and cancellation, and formats the result.
#ifndef AIRLOCK_MCP_TOOLS_RUN_CODE_TOOL_H_
#define AIRLOCK_MCP_TOOLS_RUN_CODE_TOOL_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp/tools/languages.h"
#include "mcp/tools/tool.h"

#include "audit/audit_log.h"

namespace airlock::mcp {

class RunCodeTool : public Tool {
 public:
  // `audit` (may be null) gets one run record per call (kind "run_code").
  explicit RunCodeTool(LanguageCatalog& catalog, audit::AuditLog* audit = nullptr) : catalog_(catalog), audit_(audit) {}

  std::string name() const override { return "run_code"; }
  // inputSchema's language enum and the description list the catalog's
  // current languages.
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

  static nlohmann::json InputSchema(const std::vector<runtimes::LanguageInfo>& languages,
                                    const config::LimitsConfig& limits,
                                    const std::vector<std::string>& tiers = {"native", "wasm"},
                                    const std::string& default_tier = "native");
  static std::string Description(const std::vector<runtimes::LanguageInfo>& languages,
                                 const config::LimitsConfig& limits);

 private:
  LanguageCatalog& catalog_;
  audit::AuditLog* audit_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_RUN_CODE_TOOL_H_
