#include "base/json_depth.h"

#include <utility>
#include <vector>

namespace airlock {

bool JsonDeeperThan(const nlohmann::json& value, size_t max_depth) {
  std::vector<std::pair<const nlohmann::json*, size_t>> pending{{&value, 0}};
  while (!pending.empty()) {
    auto [v, depth] = pending.back();
    pending.pop_back();
    if (!v->is_structured()) continue;
    if (depth + 1 > max_depth) return true;
    for (const nlohmann::json& child : *v) {
      if (child.is_structured()) pending.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

}  // namespace airlock
