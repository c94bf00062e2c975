// How deeply a JSON value nests, measured without recursion.
//
// nlohmann's parser and destructor are iterative, but dump() and most code
// that walks a value recurse once per level: a value nested a few hundred
// thousand deep (a hostile downstream server's result, say) would exhaust
// a thread's stack there. Values from outside are checked with this first.
//
//   if (JsonDeeperThan(message, kMaxDownstreamDepth)) { ... refuse ... }
#ifndef AIRLOCK_BASE_JSON_DEPTH_H_
#define AIRLOCK_BASE_JSON_DEPTH_H_

#include <cstddef>

#include <nlohmann/json.hpp>

namespace airlock {

// True if `value` nests more than `max_depth` levels (a scalar is depth 0,
// [] and {} are depth 1, [[1]] is 2). Stops early; uses heap memory only.
bool JsonDeeperThan(const nlohmann::json& value, size_t max_depth);

}  // namespace airlock

#endif  // AIRLOCK_BASE_JSON_DEPTH_H_
