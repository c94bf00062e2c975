// Validates a JWT access token (RFC 9068) for this resource server:
// compact JWS, an asymmetric algorithm from the allowlist (RS/PS/ES
// 256/384/512; never "none", never HMAC), a signature by a key of the
// issuer's JWKS whose type fits the algorithm, `iss` exactly the issuer,
// `aud` containing this server's resource URI (RFC 8707), `exp` required,
// `exp`/`nbf`/`iat` within clock_skew_s, and a size cap. Pure: the keys and
// the time are given, so it is tested without a network or a clock.
#ifndef AIRLOCK_AUTH_OAUTH_JWT_VALIDATOR_H_
#define AIRLOCK_AUTH_OAUTH_JWT_VALIDATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/oauth/jwk_set.h"
#include "base/status.h"

namespace airlock::auth::oauth {

struct TokenExpectations {
  std::string issuer;
  std::string resource;
  int64_t clock_skew_s = 60;
  size_t max_token_bytes = 8192;
};

// What a valid token says.
struct TokenClaims {
  std::string issuer;
  std::string subject;
  std::string client_id;            // "client_id", else "azp"; may be empty
  std::vector<std::string> scopes;  // "scope" (space-separated) or "scp"
  nlohmann::json claims;            // the whole payload, for role rules
};

// "a b  c" -> {"a", "b", "c"} (an OAuth scope string).
std::vector<std::string> SplitScopes(std::string_view s);

// The token's header "kid" ("" if none or not a JWT): which key to look for.
std::string TokenKeyId(std::string_view token);
// True if the token has the form of a JWS compact serialization (three
// base64url parts); otherwise it is opaque.
bool LooksLikeJwt(std::string_view token);

// The claims of a valid token; else Unauthenticated-style InvalidArgument
// with a message fit for WWW-Authenticate's error_description ("token
// expired", "wrong audience", ...). NotFound when no key of `keys` has the
// token's kid (the caller may refresh the JWKS and retry).
StatusOr<TokenClaims> ValidateJwt(std::string_view token, const JwkSet& keys, const TokenExpectations& expect,
                                  int64_t now_unix);

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_JWT_VALIDATOR_H_
