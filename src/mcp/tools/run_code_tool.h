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
#include "sessions/session_registry.h"

namespace airlock::mcp {

class RunCodeTool : public Tool {
 public:
  // `audit` (may be null) gets one run record per call (kind "run_code").
  // `sessions` (may be null: session_id is refused with E_SESSIONS_DISABLED)
  // runs calls with a session_id as cells of that session.
  explicit RunCodeTool(LanguageCatalog& catalog, audit::AuditLog* audit = nullptr,
                       sessions::SessionRegistry* sessions = nullptr)
      : catalog_(catalog), audit_(audit), sessions_(sessions) {}

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
  // A call with a session_id (docs/sessions.md).
  StatusOr<nlohmann::json> CallInSession(const nlohmann::json& arguments, ToolCallContext& ctx);
  // The audit run record of a finished call; an error withholds the result.
  Status AuditRun(const runtimes::RunRequest& request, const runtimes::RunResult& result, ToolCallContext& ctx,
                  int64_t started_ms, const std::string& kind);

  LanguageCatalog& catalog_;
  audit::AuditLog* audit_;
  sessions::SessionRegistry* sessions_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_RUN_CODE_TOOL_H_
