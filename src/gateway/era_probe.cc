#include "gateway/era_probe.h"

#include <algorithm>

#include "base/encoding.h"
#include "protocol/mcp_eras.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;

// What of `versions` (a JSON array) airlock speaks: the modern version, a
// legacy one, or neither.
struct Overlap {
  bool modern = false;
  bool legacy = false;
};

Overlap Speaks(const json& versions, const std::set<std::string>& legacy_versions) {
  Overlap o;
  if (!versions.is_array()) return o;
  for (const json& v : versions) {
    if (!v.is_string()) continue;
    const std::string s = v.get<std::string>();
    if (s == protocol::kLatestModernVersion) o.modern = true;
    if (legacy_versions.count(s)) o.legacy = true;
  }
  return o;
}

std::string Listed(const json& versions) {
  return SanitizeUtf8(TruncateUtf8(versions.is_null() ? std::string("none") : versions.dump(), 200));
}

}  // namespace

json ModernMeta() {
  return {{protocol::kMetaProtocolVersion, protocol::kLatestModernVersion},
          {protocol::kMetaClientInfo, {{"name", "airlock"}, {"version", AIRLOCK_VERSION}}},
          {protocol::kMetaClientCapabilities, json::object()}};
}

StatusOr<Era> ProbeEra(McpClient& client, const std::string& name, const std::set<std::string>& legacy_versions,
                       CancelToken* cancel, std::chrono::steady_clock::time_point deadline) {
  const auto now = std::chrono::steady_clock::now();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
  const auto wait = std::max(std::chrono::milliseconds(1), std::min(left, kEraProbeTimeout));
  json error;
  StatusOr<json> discovered = client.Call("server/discover", {{"_meta", ModernMeta()}}, cancel, wait, &error);
  if (discovered.ok()) {
    const json versions = discovered->is_object() ? discovered->value("supportedVersions", json()) : json();
    const Overlap o = Speaks(versions, legacy_versions);
    if (o.modern) return Era::kModern;
    if (o.legacy) return Era::kLegacy;
    return FailedPrecondition(name + ": the server supports none of airlock's protocol versions (it lists " +
                              Listed(versions) + ")");
  }
  const Status& st = discovered.status();
  if (st.code() == StatusCode::kCancelled) return st;
  if (client.closed()) return Unavailable(client.close_reason().message());
  if (error.is_object() && error.value("code", 0) == protocol::kUnsupportedProtocolVersion) {
    const json data = error.value("data", json::object());
    const json supported = data.is_object() ? data.value("supported", json()) : json();
    const Overlap o = Speaks(supported, legacy_versions);
    if (o.modern) return Era::kModern;
    if (o.legacy) return Era::kLegacy;
    return FailedPrecondition(name + ": the server supports none of airlock's protocol versions (it lists " +
                              Listed(supported) + ")");
  }
  // Any other error or silence: a legacy server.
  return Era::kLegacy;
}

}  // namespace airlock::gateway
