// The HTTP request headers of the modern era (2026-07-28) for one outgoing
// JSON-RPC message, derived from the message itself:
//
//   MCP-Protocol-Version  params._meta["io.modelcontextprotocol/protocolVersion"]
//   Mcp-Method            method
//   Mcp-Name              params.name (tools/call, prompts/get) or
//                         params.uri (resources/read)
//
// A value that is not a plain header value (non-ASCII, control characters,
// leading or trailing blanks, or the sentinel pattern itself) is sent as
// "=?base64?...?=" (streamable-http.mdx, "Value Encoding"). A message
// without the modern _meta gets no headers: it is legacy traffic.
#ifndef AIRLOCK_GATEWAY_MODERN_HEADERS_H_
#define AIRLOCK_GATEWAY_MODERN_HEADERS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::gateway {

std::vector<std::pair<std::string, std::string>> ModernRequestHeaders(const nlohmann::json& message);

// `value` as a header value: itself when it is safe, else base64-wrapped.
std::string EncodeHeaderValue(std::string_view value);

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_MODERN_HEADERS_H_
