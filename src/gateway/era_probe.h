// Which era of MCP a downstream server speaks, found the way the 2026-07-28
// specification's backward-compatibility rules say (basic/transports/
// stdio.mdx and streamable-http.mdx, "Backward Compatibility"):
//
//   server/discover with airlock's modern version in _meta, then
//   - a DiscoverResult naming that version: the server is modern;
//   - a DiscoverResult or an UnsupportedProtocolVersion error (-32022) that
//     names only legacy versions airlock speaks: use the legacy handshake;
//   - -32022 naming nothing airlock speaks: refuse (no fallback);
//   - any other error, or no answer within the probe's time: a legacy
//     server (the fallback is never keyed to one error code).
//
//   auto era = ProbeEra(client, "crm", cancel, deadline);
//   if (era.ok() && *era == Era::kModern) client.UseModernEra(ModernMeta());
#ifndef AIRLOCK_GATEWAY_ERA_PROBE_H_
#define AIRLOCK_GATEWAY_ERA_PROBE_H_

#include <chrono>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "base/status.h"
#include "gateway/jsonrpc_client.h"

namespace airlock::gateway {

enum class Era { kModern, kLegacy };

// How long a server may take to answer the probe before it counts as a
// legacy server that ignores requests before initialize (process start-up
// of a stdio server included).
inline constexpr std::chrono::milliseconds kEraProbeTimeout{10000};

// The _meta airlock sends with every modern request: its modern protocol
// version, its identity and its (empty) client capabilities.
nlohmann::json ModernMeta();

// Probes `client` (started, nothing sent yet). `legacy_versions` are the
// legacy versions airlock's handshake accepts. Errors: Cancelled, the
// connection lost, or FailedPrecondition for a server that speaks no
// version airlock does.
StatusOr<Era> ProbeEra(McpClient& client, const std::string& name, const std::set<std::string>& legacy_versions,
                       CancelToken* cancel, std::chrono::steady_clock::time_point deadline);

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_ERA_PROBE_H_
