// Language discovery: the `list_languages` tool and the airlock://languages
// resource, both returning the same JSON document:
//   {"languages": [LanguageInfo JSON...],
//    "limits": {"default_timeout_ms", "max_timeout_ms", "default_memory_mb",
//               "max_memory_mb", "max_output_bytes", "max_files",
//               "max_file_bytes", "max_total_file_bytes"},
//    "sandbox": {"network": false, "workdir": "/work", "persistent": false}}
// Each language says whether it has sessions ("sessions": true|false) and
// in which tiers ("session_tiers"); "sessions" is true exactly when that
// list, cut to the endpoint's allowed tiers and sessions.enabled, is not empty.
// `list_languages {"packages": true}` adds each language's importable
// packages per tier ("packages": {"native": {...}, "wasm": {...}}, see
// package_catalog.h); {"language": NAME} lists that language only.
#ifndef AIRLOCK_MCP_TOOLS_LANGUAGES_H_
#define AIRLOCK_MCP_TOOLS_LANGUAGES_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "mcp/tools/package_catalog.h"
#include "mcp/tools/tool.h"
#include "runtimes/code_executor.h"

namespace airlock::mcp {

inline constexpr char kLanguagesResourceUri[] = "airlock://languages";

// The languages clients may use: the executor's, restricted to
// config.languages.enabled when that is non-empty and to the endpoint's
// isolation tiers (`allowed_tiers`; a language left with no tier is not
// offered), sorted by name.
class LanguageCatalog {
 public:
  // `endpoint_packages`: the endpoint's "packages" (names of
  // config.languages.packages; "*": all of them).
  LanguageCatalog(runtimes::CodeExecutor& executor, const config::Config& config,
                  std::vector<std::string> allowed_tiers = {"native", "wasm"},
                  const std::vector<std::string>& endpoint_packages = {"*"});

  std::vector<runtimes::LanguageInfo> Languages();
  const config::LimitsConfig& limits() const { return limits_; }
  const std::vector<std::string>& allowed_tiers() const { return allowed_tiers_; }
  // The preferred tier for runs that name none: languages.default_isolation,
  // or the endpoint's first tier when that one is not allowed here.
  const std::string& default_tier() const { return default_tier_; }
  runtimes::CodeExecutor& executor() { return executor_; }
  PackageCatalog& packages() { return packages_; }
  nlohmann::json Describe();

 private:
  runtimes::CodeExecutor& executor_;
  const config::LimitsConfig limits_;
  const std::vector<std::string> enabled_;
  const bool sessions_;  // config sessions.enabled
  const std::vector<std::string> allowed_tiers_;
  const std::string default_tier_;
  PackageCatalog packages_;
};

class ListLanguagesTool : public Tool {
 public:
  explicit ListLanguagesTool(LanguageCatalog& catalog) : catalog_(catalog) {}
  std::string name() const override { return "list_languages"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  LanguageCatalog& catalog_;
};

// The resources/list entry and the resources/read result for the resource.
nlohmann::json LanguagesResourceEntry();
nlohmann::json ReadLanguagesResource(LanguageCatalog& catalog);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_LANGUAGES_H_
