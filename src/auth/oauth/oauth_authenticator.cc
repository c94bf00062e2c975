#include "auth/oauth/oauth_authenticator.h"

#include <algorithm>
#include <chrono>

#include "auth/oauth/jwt_validator.h"
#include "auth/oauth/resource_metadata.h"
#include "auth/oauth/role_mapping.h"

namespace airlock::auth::oauth {
namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The scope to ask for in a challenge: the required one, else all supported.
std::string ScopeHint(const config::OAuthConfig& cfg) {
  if (!cfg.required_scope.empty()) return cfg.required_scope;
  std::string s;
  for (const std::string& x : cfg.scopes_supported) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

OAuthAuthenticator::OAuthAuthenticator(config::OAuthConfig cfg, Fetcher fetch, WallClock now, Clock steady,
                                       std::unique_ptr<TokenIntrospector> introspector)
    : cfg_(std::move(cfg)),
      now_(now ? std::move(now) : WallClock(UnixNow)),
      keys_(JwksCache::Options{.issuer = cfg_.issuer,
                               .jwks_uri = cfg_.jwks_uri,
                               .min_refresh_s = static_cast<int64_t>(cfg_.jwks_refresh_min_s)},
            std::move(fetch), std::move(steady)),
      introspector_(std::move(introspector)) {}

std::string OAuthAuthenticator::Challenge(const std::string& endpoint_path) const {
  return BearerChallenge(MetadataUrl(cfg_.resource, endpoint_path), ScopeHint(cfg_), "", "");
}

AuthDecision OAuthAuthenticator::Refuse(int status, const std::string& error, const std::string& message,
                                        const std::string& endpoint_path) const {
  AuthDecision d;
  d.status = status;
  d.message = message;
  d.challenge = BearerChallenge(MetadataUrl(cfg_.resource, endpoint_path), ScopeHint(cfg_), error, message);
  return d;
}

AuthDecision OAuthAuthenticator::Authenticate(std::string_view token, const std::string& endpoint_path) {
  if (token.size() > cfg_.max_token_bytes) {
    return Refuse(401, "invalid_token", "token is larger than " + std::to_string(cfg_.max_token_bytes) + " bytes",
                  endpoint_path);
  }
  const bool jwt = LooksLikeJwt(token);
  if (introspector_ && (cfg_.introspection.all_tokens || !jwt)) {
    StatusOr<TokenClaims> claims = introspector_->Introspect(token);
    if (claims.ok()) return Admit(*claims, endpoint_path);
    // The provider could not say: not the client's fault, and never access.
    if (claims.status().code() != StatusCode::kInvalidArgument) {
      return Refuse(503, "", "cannot check the token now: " + claims.status().message(), endpoint_path);
    }
    return Refuse(401, "invalid_token", claims.status().message(), endpoint_path);
  }
  if (!jwt) return Refuse(401, "invalid_token", "token is not a JWT", endpoint_path);
  return AuthenticateJwt(token, endpoint_path);
}

AuthDecision OAuthAuthenticator::AuthenticateJwt(std::string_view token, const std::string& endpoint_path) {
  const TokenExpectations expect{.issuer = cfg_.issuer,
                                 .resource = cfg_.resource,
                                 .clock_skew_s = static_cast<int64_t>(cfg_.clock_skew_s),
                                 .max_token_bytes = cfg_.max_token_bytes};
  const std::string kid = TokenKeyId(token);
  StatusOr<std::shared_ptr<const JwkSet>> keys = keys_.Get(kid);
  if (!keys.ok()) {
    return Refuse(401, "invalid_token", "cannot verify tokens now: " + keys.status().message(), endpoint_path);
  }
  StatusOr<TokenClaims> claims = ValidateJwt(token, **keys, expect, now_());
  if (!claims.ok()) return Refuse(401, "invalid_token", claims.status().message(), endpoint_path);
  return Admit(*claims, endpoint_path);
}

AuthDecision OAuthAuthenticator::Admit(const TokenClaims& claims, const std::string& endpoint_path) const {
  if (!cfg_.required_scope.empty() &&
      std::find(claims.scopes.begin(), claims.scopes.end(), cfg_.required_scope) == claims.scopes.end()) {
    AuthDecision d = Refuse(403, "insufficient_scope", "token lacks scope " + cfg_.required_scope, endpoint_path);
    d.client_id = claims.client_id;
    return d;
  }
  std::optional<std::string> role = MapRole(cfg_.role_rules, claims);
  if (!role) {
    AuthDecision d = Refuse(403, "insufficient_scope", "no role rule matches the token", endpoint_path);
    d.client_id = claims.client_id;
    return d;
  }
  AuthDecision d;
  d.status = 200;
  d.client_id = claims.client_id;
  d.caller = governance::Caller{.user = OAuthUser(claims), .role = *role, .auth = "oauth", .key_id = claims.client_id};
  return d;
}

}  // namespace airlock::auth::oauth
