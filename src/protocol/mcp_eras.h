// The wire vocabulary of MCP's two eras that both sides of airlock speak:
// the server (src/mcp) and the client of downstream servers (src/gateway).
// Header-only constants; neither side's code lives here.
//
//   legacy era (2025-11-25 and earlier): an `initialize` handshake, then an
//     Mcp-Session-Id over HTTP;
//   modern era (2026-07-28 and later): no handshake; every request carries
//     its protocol version, client capabilities and client identity in
//     params._meta, every result carries `resultType`.
//
// Spec: docs/specification/2026-07-28/basic/{index,versioning}.mdx,
// basic/transports/{stdio,streamable-http}.mdx, server/discover.mdx.
#ifndef AIRLOCK_PROTOCOL_MCP_ERAS_H_
#define AIRLOCK_PROTOCOL_MCP_ERAS_H_

#include <cstdint>

namespace airlock::protocol {

// The modern revisions airlock speaks, newest first.
inline constexpr const char* kModernVersions[] = {"2026-07-28"};
inline constexpr const char* kLatestModernVersion = "2026-07-28";

// The _meta keys of the modern era (basic/index.mdx, "_meta").
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";

// Error codes the modern era defines (-32020..-32099 belong to the spec).
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;

// The modern HTTP request headers (basic/transports/streamable-http.mdx).
inline constexpr const char* kHeaderProtocolVersion = "MCP-Protocol-Version";
inline constexpr const char* kHeaderMethod = "Mcp-Method";
inline constexpr const char* kHeaderName = "Mcp-Name";

// `resultType` of an ordinary (final) result.
inline constexpr const char* kResultTypeComplete = "complete";

}  // namespace airlock::protocol

#endif  // AIRLOCK_PROTOCOL_MCP_ERAS_H_
