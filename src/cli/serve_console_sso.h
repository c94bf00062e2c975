// `airlock serve --http`: the console's single sign-on with OpenID Connect
// (server.http.console.sso, docs/console.md) built from the config: the
// client secret read from its file now (a missing or empty one fails
// start), the redirect URI resolved (configured, else derived from the
// listener and the console path), the role checked to be an admin role of
// the policy, and bounded HTTP fetches for discovery, JWKS and the token
// endpoint (http_fetch.h).
#ifndef AIRLOCK_CLI_SERVE_CONSOLE_SSO_H_
#define AIRLOCK_CLI_SERVE_CONSOLE_SSO_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "config/config.h"
#include "console/oidc_sso.h"
#include "governance/policy.h"

namespace airlock::cli {

// "http[s]://<listen><console path>/sso/callback" unless sso.redirect_uri is set.
std::string ConsoleSsoRedirectUri(const config::Config& cfg);

// Null when server.http.console.sso.issuer is empty.
StatusOr<std::unique_ptr<console::OidcSso>> MakeConsoleSso(const config::Config& cfg, const governance::Policy& policy);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_SERVE_CONSOLE_SSO_H_
