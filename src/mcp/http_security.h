// Request checks for the Streamable HTTP transport: Origin and Host
// validation against DNS rebinding, the Accept header, and the static
// bearer token. Pure functions, so they are tested without a server.
#ifndef AIRLOCK_MCP_HTTP_SECURITY_H_
#define AIRLOCK_MCP_HTTP_SECURITY_H_

#include <string>
#include <string_view>
#include <vector>

namespace airlock::mcp {

// "localhost", "127.0.0.1" (any 127.x), "::1" or "[::1]" (case-insensitive).
bool IsLoopbackName(std::string_view host);

// An Origin header value ("scheme://host[:port]") is allowed when its host
// is loopback or the whole origin equals (case-insensitively, ignoring a
// trailing '/') an entry of `allowed`. "null" and unparsable values are not.
bool OriginAllowed(std::string_view origin, const std::vector<std::string>& allowed);

// A Host header ("host[:port]") is allowed when its host is loopback or in
// `allowed`; when `allowed` is empty and the server is bound to a
// non-loopback address, any Host is accepted.
bool HostAllowed(std::string_view host_header, bool bound_to_loopback, const std::vector<std::string>& allowed);

// True if the Accept header lists `type` (or "*/*" / "<major>/*").
bool AcceptsType(std::string_view accept, std::string_view type);

// True if `authorization` is "Bearer <token>" with exactly `token`; the
// comparison takes time independent of where the strings differ.
bool BearerMatches(std::string_view authorization, std::string_view token);
// The token of "Bearer <token>" (case-insensitive scheme, trimmed); empty if
// the header has another form.
std::string_view BearerToken(std::string_view authorization);

// Who may read /metrics: a loopback peer (`remote_addr`), or anyone whose
// Authorization is "Bearer <token>" when a token is configured.
bool MetricsRequestAllowed(std::string_view remote_addr, std::string_view authorization, std::string_view token);

// 128 bits from getrandom(2) as 32 lower-case hex digits.
std::string RandomSessionId();

// The user of an HTTP caller without any authentication, one per MCP session:
// "anonymous:" + the first 16 hex digits of SHA-256(mcp_session_id). One-way,
// so the audit log and the console name the caller without revealing the
// session id, which is all an anonymous client holds.
std::string AnonymousUser(const std::string& mcp_session_id);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_HTTP_SECURITY_H_
