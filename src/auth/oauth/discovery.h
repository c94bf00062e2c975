// One endpoint of an authorization server, found from its issuer: the RFC
// 8414 metadata (/.well-known/oauth-authorization-server[/path]) first,
// then OpenID discovery (/.well-known/openid-configuration); a document
// counts only if its "issuer" equals `issuer` exactly and it has `key` as
// a string.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::string uri, DiscoverEndpoint(iss, fetch, "jwks_uri"));
#ifndef AIRLOCK_AUTH_OAUTH_DISCOVERY_H_
#define AIRLOCK_AUTH_OAUTH_DISCOVERY_H_

#include <string>

#include "auth/oauth/jwks_cache.h"
#include "base/status.h"

namespace airlock::auth::oauth {

// `key`: "jwks_uri", "introspection_endpoint", ... Unavailable naming every
// document's failure when none gives it.
StatusOr<std::string> DiscoverEndpoint(const std::string& issuer, const Fetcher& fetch, const std::string& key);

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_DISCOVERY_H_
