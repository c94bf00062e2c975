// The limits of one code-mode run (research codemode.md §7 G5), and how they
// are configured: the admin sets them in the config file, and a caller may
// only lower them for its own run.
//
//   AIRLOCK_ASSIGN_OR_RETURN(Limits admin, LimitsFromJson(config["codemode"]["limits"]));
//   AIRLOCK_ASSIGN_OR_RETURN(Limits run, ApplyCallerLimits(admin, request["limits"]));
//   BridgeSession session(gateway, grants, run, start + std::chrono::milliseconds(run.wall_ms));
//
// JSON keys are the field names below. Every value is a positive integer.
#ifndef AIRLOCK_CODEMODE_LIMITS_H_
#define AIRLOCK_CODEMODE_LIMITS_H_

#include <cstdint>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::codemode {

struct Limits {
  uint64_t wall_ms = 10'000;              // spawn to result, incl. tool latency
  uint32_t max_calls = 500;               // bridge requests per run (search+describe+call, allowed or denied)
  uint32_t max_concurrent = 16;           // calls in flight downstream; more wait FIFO
  uint64_t max_args_bytes = 256 << 10;    // serialized JSON args of one call
  uint64_t max_result_bytes = 1 << 20;    // one tool result (serialized value) AND the program's return value
  uint64_t max_console_bytes = 64 << 10;  // each of stdout and stderr; the rest is dropped
  uint64_t memory_mb = 256;

  // {"wall_ms": .., "max_calls": .., ...} with every field.
  nlohmann::json ToJson() const;
};

// Admin limits from config JSON: an object with any subset of the fields
// (null: `defaults` unchanged). Unknown keys, non-integers, zero and negative
// values are InvalidArgument naming the key ("limits.max_calls: ...").
StatusOr<Limits> LimitsFromJson(const nlohmann::json& j, const Limits& defaults = {});

// The caller's request may only LOWER the admin's limits. `requested` is an
// object with any subset of the fields (null: none); 0 or a missing key keeps
// the admin's value; a value above the admin's is InvalidArgument
// ("limits.wall_ms 20000 exceeds the maximum of 10000"); unknown keys,
// non-integers and negative values are InvalidArgument too.
StatusOr<Limits> ApplyCallerLimits(const Limits& admin, const nlohmann::json& requested);

}  // namespace airlock::codemode

#endif  // AIRLOCK_CODEMODE_LIMITS_H_
