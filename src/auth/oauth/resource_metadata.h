// OAuth 2.0 Protected Resource Metadata (RFC 9728) and the Bearer
// challenges (RFC 6750) that point MCP clients at it.
//
//   GET /.well-known/oauth-protected-resource[/mcp]  → ProtectedResourceMetadata(cfg)
//   401: WWW-Authenticate: Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="mcp"
//   403: WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp", resource_metadata="..."
#ifndef AIRLOCK_AUTH_OAUTH_RESOURCE_METADATA_H_
#define AIRLOCK_AUTH_OAUTH_RESOURCE_METADATA_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace airlock::auth::oauth {

// {resource, authorization_servers, scopes_supported, bearer_methods_supported: ["header"]}.
nlohmann::json ProtectedResourceMetadata(const config::OAuthConfig& cfg);

// The paths serving the metadata: "/.well-known/oauth-protected-resource"
// and, for each endpoint path ("/mcp"), the path-suffixed form
// "/.well-known/oauth-protected-resource/mcp".
std::vector<std::string> MetadataPaths(const std::vector<std::string>& endpoint_paths);

// The absolute metadata URL for an endpoint path: the resource URI's
// origin + "/.well-known/oauth-protected-resource" + endpoint_path.
std::string MetadataUrl(const std::string& resource, const std::string& endpoint_path);

// A Bearer challenge. `error` empty: the bare challenge of a request without
// a token; else "invalid_token" (401) or "insufficient_scope" (403) with
// `description` (quotes and backslashes dropped). `scope` empty: omitted.
std::string BearerChallenge(const std::string& metadata_url, const std::string& scope, const std::string& error,
                            const std::string& description);

// Start-up checks of server.http.oauth against where airlock listens:
// issuer and resource absolute URIs without a fragment; the resource
// https:// unless its host is loopback; a plain HTTP listener on a
// non-loopback address only with behind_tls_proxy; role rules well formed;
// an introspection endpoint https:// unless its host is loopback.
// `listener_is_loopback`: true as well for an HTTPS listener
// (server.http.tls), where tokens never cross the network in clear text.
Status CheckOAuthConfig(const config::OAuthConfig& cfg, bool listener_is_loopback);

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_RESOURCE_METADATA_H_
