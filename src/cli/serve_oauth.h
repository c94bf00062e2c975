// `airlock serve --http` as an OAuth 2.1 resource server: checks
// server.http.oauth against the listener, builds the authenticator (HTTP
// fetches of discovery and JWKS) and installs it in the transport's
// options: the token decision, the Protected Resource Metadata and the 401
// challenge; with server.http.oauth.introspection.client_id, opaque tokens
// are introspected (the client secret read now: a missing one fails start).
// Every refused token is an audit event ("auth_refused": status, reason,
// endpoint, client_id when the token was genuine), at most 30 rows a minute:
// refusals past that are counted in the next row's "suppressed_before" (a
// flood of garbage tokens cannot fill the log).
#ifndef AIRLOCK_CLI_SERVE_OAUTH_H_
#define AIRLOCK_CLI_SERVE_OAUTH_H_

#include <memory>

#include "audit/audit_log.h"
#include "auth/oauth/oauth_authenticator.h"
#include "base/status.h"
#include "config/config.h"
#include "mcp/http_transport.h"

namespace airlock::cli {

// Null (and `http` untouched) when server.http.oauth.issuer is empty. The
// returned authenticator must outlive the transport; `audit` may be null.
StatusOr<std::unique_ptr<auth::oauth::OAuthAuthenticator>> InstallOAuth(const config::Config& cfg,
                                                                         mcp::HttpOptions* http,
                                                                         audit::AuditLog* audit);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_SERVE_OAUTH_H_
