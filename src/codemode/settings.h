// Code mode's section of the config file:
//   "codeMode": {"enabled": true, "limits": {"wall_ms": 10000, ...},
//                "proposals_per_hour": 20}
// `enabled` (default true) switches the execute / search_tools /
// describe_tool tools on; `limits` are the admin's limits (limits.h);
// `proposals_per_hour` caps propose_code_tool calls per user (each gateway
// process counts its own; 0: no cap), so an agent cannot flood the review
// queue.
#ifndef AIRLOCK_CODEMODE_SETTINGS_H_
#define AIRLOCK_CODEMODE_SETTINGS_H_

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "codemode/limits.h"

namespace airlock::codemode {

struct Settings {
  bool enabled = true;
  Limits limits;
  uint32_t proposals_per_hour = 20;
};

// From the "codeMode" value (null: defaults). Errors name the key
// ("codeMode.limits.max_calls: ...").
StatusOr<Settings> SettingsFromJson(const nlohmann::json& j);

}  // namespace airlock::codemode

#endif  // AIRLOCK_CODEMODE_SETTINGS_H_
