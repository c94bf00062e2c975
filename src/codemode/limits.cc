#include "codemode/limits.h"

#include <limits>
#include <string>

namespace airlock::codemode {
namespace {

using nlohmann::json;

// One field: its JSON key, where it lives, and its largest allowed value.
struct Field {
  const char* key;
  uint64_t Limits::*u64 = nullptr;
  uint32_t Limits::*u32 = nullptr;

  uint64_t Get(const Limits& l) const { return u64 != nullptr ? l.*u64 : l.*u32; }
  void Set(Limits& l, uint64_t v) const {
    if (u64 != nullptr) {
      l.*u64 = v;
    } else {
      l.*u32 = static_cast<uint32_t>(v);
    }
  }
  uint64_t Max() const {
    return u64 != nullptr ? uint64_t{std::numeric_limits<int64_t>::max()} : std::numeric_limits<uint32_t>::max();
  }
};

const Field kFields[] = {
    {"wall_ms", &Limits::wall_ms, nullptr},
    {"max_calls", nullptr, &Limits::max_calls},
    {"max_concurrent", nullptr, &Limits::max_concurrent},
    {"max_args_bytes", &Limits::max_args_bytes, nullptr},
    {"max_result_bytes", &Limits::max_result_bytes, nullptr},
    {"max_console_bytes", &Limits::max_console_bytes, nullptr},
    {"memory_mb", &Limits::memory_mb, nullptr},
};

const Field* FindField(const std::string& key) {
  for (const Field& f : kFields) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

// The integer value of one key: >= 0 and <= the field's maximum; positive
// unless `allow_zero`.
StatusOr<uint64_t> ReadValue(const Field& f, const json& v, bool allow_zero) {
  const std::string where = std::string("limits.") + f.key;
  if (!v.is_number_integer()) return InvalidArgument(where + ": expected an integer");
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) return InvalidArgument(where + ": must be positive");
  const uint64_t u = v.get<uint64_t>();
  if (u > f.Max()) return InvalidArgument(where + ": " + std::to_string(u) + " is too large");
  if (u == 0 && !allow_zero) return InvalidArgument(where + ": must be positive");
  return u;
}

// Checks that `j` is null or an object whose keys are all fields.
Status CheckShape(const json& j) {
  if (j.is_null()) return OkStatus();
  if (!j.is_object()) return InvalidArgument("limits: expected an object");
  for (const auto& [key, value] : j.items()) {
    if (FindField(key) == nullptr) return InvalidArgument("limits: unknown key \"" + key + "\"");
  }
  return OkStatus();
}

}  // namespace

json Limits::ToJson() const {
  json j = json::object();
  for (const Field& f : kFields) j[f.key] = f.Get(*this);
  return j;
}

StatusOr<Limits> LimitsFromJson(const json& j, const Limits& defaults) {
  AIRLOCK_RETURN_IF_ERROR(CheckShape(j));
  Limits out = defaults;
  if (j.is_null()) return out;
  for (const auto& [key, value] : j.items()) {
    const Field& f = *FindField(key);
    AIRLOCK_ASSIGN_OR_RETURN(uint64_t v, ReadValue(f, value, /*allow_zero=*/false));
    f.Set(out, v);
  }
  return out;
}

StatusOr<Limits> ApplyCallerLimits(const Limits& admin, const json& requested) {
  AIRLOCK_RETURN_IF_ERROR(CheckShape(requested));
  Limits out = admin;
  if (requested.is_null()) return out;
  for (const auto& [key, value] : requested.items()) {
    const Field& f = *FindField(key);
    AIRLOCK_ASSIGN_OR_RETURN(uint64_t v, ReadValue(f, value, /*allow_zero=*/true));
    if (v == 0) continue;
    if (v > f.Get(admin)) {
      return InvalidArgument("limits." + key + " " + std::to_string(v) + " exceeds the maximum of " +
                             std::to_string(f.Get(admin)));
    }
    f.Set(out, v);
  }
  return out;
}

}  // namespace airlock::codemode
