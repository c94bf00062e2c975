// Validation of run_code arguments into a runtimes::RunRequest.
//
// Two kinds of failure:
//  * InvalidArgument: the arguments have the wrong shape (a missing or
//    ill-typed field, an unknown property); the message names the field,
//    e.g. "arguments.language: expected string".
//  * FailedPrecondition: well-formed but not allowed (unknown language, a
//    limit above the server's maximum, a bad file name, too many files);
//    reported to the model as a tool error it can correct.
#ifndef AIRLOCK_MCP_TOOLS_RUN_CODE_ARGS_H_
#define AIRLOCK_MCP_TOOLS_RUN_CODE_ARGS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "config/config.h"
#include "runtimes/run_types.h"

namespace airlock::mcp {

// Which isolation tiers a run may use here (the endpoint's) and which one a
// run that names none prefers (config languages.default_isolation).
struct TierRule {
  std::vector<std::string> allowed = {"native", "wasm"};
  std::string preferred = "native";
};

// Limits not given by the caller are resolved here: the chosen tier's
// default (LanguageInfo::DefaultMemoryMb; when the executor reports one)
// capped at the maximum, else the config's default. Values above the
// maximum are rejected, not clamped. The tier not given is
// `tiers.preferred` when the language has it, else the language's first
// tier; a tier the language lacks or the endpoint forbids is refused.
StatusOr<runtimes::RunRequest> ParseRunCodeArguments(
    const nlohmann::json& arguments, const std::vector<runtimes::LanguageInfo>& languages,
    const config::LimitsConfig& limits, const TierRule& tiers = {});

// A relative path under /work: non-empty, no leading '/', no "." / ".." or
// empty components, no NUL, each component at most 255 bytes, whole path at
// most 4096 bytes. Returns an explanation, or "" if valid.
std::string CheckRelativePath(const std::string& name);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_RUN_CODE_ARGS_H_
