// The modern era of MCP (protocol revision 2026-07-28 and later): no
// initialize handshake, no Mcp-Session-Id; every request carries its protocol
// version, client capabilities and client identity in params._meta, every
// result carries resultType (and the server's identity in its _meta), and
// list results carry caching hints. This file holds the era's wire vocabulary
// and the pure checks both transports use; Session (session_modern.cc) is the
// request front that applies them. The legacy era (initialize, 2025-11-25
// and earlier) is Session's other front (session.cc).
//
//   if (modern::LooksModern(message)) ...          // the request opts in
//   auto meta = modern::ReadRequestMeta(message.params);
//   if (auto* err = std::get_if<modern::Error>(&meta)) reply(modern::MakeError(id, *err));
//
// Spec: docs/specification/2026-07-28/basic/{index,versioning}.mdx,
// basic/transports/streamable-http.mdx, server/discover.mdx,
// server/utilities/caching.mdx; schema/2026-07-28/schema.json.
#ifndef AIRLOCK_MCP_MODERN_H_
#define AIRLOCK_MCP_MODERN_H_

#include <functional>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "protocol/json_rpc.h"
#include "mcp/log_level.h"
#include "protocol/mcp_eras.h"

namespace airlock::mcp::modern {

// The era's vocabulary, shared with the client side (src/gateway).
using protocol::kHeaderMismatch;
using protocol::kLatestModernVersion;
using protocol::kMetaClientCapabilities;
using protocol::kMetaClientInfo;
using protocol::kMetaLogLevel;
using protocol::kMetaProtocolVersion;
using protocol::kMetaServerInfo;
using protocol::kMetaSubscriptionId;
using protocol::kMissingRequiredClientCapability;
using protocol::kModernVersions;
using protocol::kUnsupportedProtocolVersion;

// Caching hints (server/utilities/caching.mdx). A caller's tool list depends
// on its role and endpoint, so it is "private" (one authorization context);
// discover and the languages resource are the same for every caller of the
// endpoint, so "public".
inline constexpr int64_t kToolsListTtlMs = 60'000;
inline constexpr int64_t kResourcesTtlMs = 60'000;
inline constexpr int64_t kDiscoverTtlMs = 300'000;

bool IsModernVersion(const std::string& version);
// Every version airlock speaks, modern then legacy, newest first: the
// `supportedVersions` of server/discover and `data.supported` of -32022.
nlohmann::json SupportedVersions();

// True if the request opts in to the modern era: its params._meta names a
// protocol version (whatever its value), or it is server/discover (the
// stdio probe).
bool LooksModern(const protocol::jsonrpc::Message& m);

// A JSON-RPC error of the modern era, with the HTTP status it takes.
struct Error {
  int code = protocol::jsonrpc::kInvalidParams;
  std::string message;
  nlohmann::json data = nullptr;
  int http_status = 400;
};

// What a modern request says about itself in params._meta.
struct RequestMeta {
  std::string protocol_version;
  nlohmann::json client_capabilities = nlohmann::json::object();
  std::string client;                  // "name/version" from clientInfo, sanitized; may be empty
  std::optional<LogLevel> log_level;   // absent: no notifications/message for this request
  nlohmann::json progress_token;       // null: no progress wanted
  std::string traceparent, tracestate; // W3C trace context, empty when absent
};

// Reads and checks params._meta: protocolVersion and clientCapabilities are
// required (-32602 when missing or mistyped), an unsupported version is
// -32022 with data.supported/requested, clientInfo and logLevel are checked
// when present.
std::variant<RequestMeta, Error> ReadRequestMeta(const nlohmann::json& params);

// UnsupportedProtocolVersion (-32022, HTTP 400) for `requested`, with
// data.supported (SupportedVersions()) and data.requested.
Error UnsupportedVersion(const std::string& requested);

// A transport-level rejection (Host, Origin, authentication, Accept,
// Content-Type, method, path, shutting down) of a modern request, shaped by
// the 2026 schema: the request's id when its body was read (else no id), and
// no code from -32000..-32019 (basic/index.mdx: new implementations should
// not use them): -32600 Invalid Request for 4xx, -32603 for 5xx, with
// data.httpStatus. The legacy era keeps -32000 with id null.
nlohmann::json TransportError(const nlohmann::json& id, int http_status, const std::string& message);

// An error response; a null id is omitted (the 2026 schema's id is a string
// or integer, optional only when the request's id could not be read).
nlohmann::json MakeError(const nlohmann::json& id, const Error& error);
nlohmann::json MakeError(const nlohmann::json& id, int code, const std::string& message,
                         const nlohmann::json& data = nullptr);
// Turns a legacy-shaped error response (e.g. a parse error with id null)
// into the modern shape.
nlohmann::json ModernizeError(nlohmann::json response);

// A complete result: resultType "complete" and the server's identity in _meta.
nlohmann::json CompleteResult(const nlohmann::json& id, nlohmann::json result);
// Adds ttlMs and cacheScope ("public" or "private") to a cacheable result
// (the `result` member of a response; errors are left alone).
void AddCacheHints(nlohmann::json& response, int64_t ttl_ms, const char* scope);

// Decodes a header value that may use the Base64 sentinel
// "=?base64?...?=" (streamable-http.mdx, "Value Encoding"). nullopt: invalid.
std::optional<std::string> DecodeHeaderValue(const std::string& value);

// Checks the Streamable HTTP request headers of a modern POST against its
// body: MCP-Protocol-Version (== _meta protocolVersion), Mcp-Method
// (== method) and, for tools/call, resources/read, prompts/get and tasks/*, Mcp-Name
// (== params.name, params.uri or params.taskId). `header` returns a header's value, or
// nullopt when absent. A missing or different header is HeaderMismatch
// (-32020, HTTP 400).
using HeaderLookup = std::function<std::optional<std::string>(const std::string&)>;
std::optional<Error> CheckHttpHeaders(const HeaderLookup& header, const protocol::jsonrpc::Message& m);

}  // namespace airlock::mcp::modern

#endif  // AIRLOCK_MCP_MODERN_H_
