#include "codemode/settings.h"

namespace airlock::codemode {

StatusOr<Settings> SettingsFromJson(const nlohmann::json& j) {
  Settings s;
  if (j.is_null()) return s;
  if (!j.is_object()) return InvalidArgument("codeMode: expected an object");
  for (const auto& [key, value] : j.items()) {
    if (key != "enabled" && key != "limits" && key != "proposals_per_hour") {
      return InvalidArgument("codeMode." + key + ": unknown key");
    }
  }
  if (auto e = j.find("enabled"); e != j.end()) {
    if (!e->is_boolean()) return InvalidArgument("codeMode.enabled: expected true or false");
    s.enabled = e->get<bool>();
  }
  if (auto p = j.find("proposals_per_hour"); p != j.end()) {
    if (!p->is_number_unsigned() || p->get<uint64_t>() > 1000000) {
      return InvalidArgument("codeMode.proposals_per_hour: expected an integer from 0 to 1000000");
    }
    s.proposals_per_hour = p->get<uint32_t>();
  }
  if (auto l = j.find("limits"); l != j.end()) {
    StatusOr<Limits> limits = LimitsFromJson(*l);
    if (!limits.ok()) return InvalidArgument("codeMode." + limits.status().message());
    s.limits = *limits;
  }
  return s;
}

}  // namespace airlock::codemode
