// The resource server's decision on one bearer token: a Caller, or the
// status (401/403/503) and WWW-Authenticate challenge to answer with.
// Combines the JWKS cache, the JWT validator, token introspection for
// opaque tokens (introspection.h, when configured) and the role rules of
// server.http.oauth. Thread-safe; Authenticate may block only while the
// key set is (re)fetched (jwks_cache.h) or a token is introspected, never on
// a lock held by a fetch.
//
//   auto oauth = OAuthAuthenticator::Create(config.server.http.oauth, HttpGet);
//   AuthDecision d = oauth->Authenticate(token, "/mcp");
//   if (!d.caller) { res.status = d.status; res.set_header("WWW-Authenticate", d.challenge); }
#ifndef AIRLOCK_AUTH_OAUTH_OAUTH_AUTHENTICATOR_H_
#define AIRLOCK_AUTH_OAUTH_OAUTH_AUTHENTICATOR_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/oauth/introspection.h"
#include "auth/oauth/jwks_cache.h"
#include "config/config.h"
#include "governance/policy.h"

namespace airlock::auth::oauth {

struct AuthDecision {
  std::optional<governance::Caller> caller;  // set: admitted
  int status = 401;                          // else 401, 403, or 503 (introspection unavailable)
  std::string challenge;                     // WWW-Authenticate value
  std::string message;                       // why, for the body and logs
  std::string client_id;                     // of a valid token, "" otherwise
};

class OAuthAuthenticator {
 public:
  // Wall-clock unix seconds (tests pass a fixed one).
  using WallClock = std::function<int64_t()>;
  // `introspector` null: a token that is not a JWT is refused (401).
  OAuthAuthenticator(config::OAuthConfig cfg, Fetcher fetch, WallClock now = nullptr, Clock steady = SteadySeconds,
                     std::unique_ptr<TokenIntrospector> introspector = nullptr);

  // `token` from "Authorization: Bearer"; `endpoint_path` the MCP endpoint
  // ("/mcp"), naming the metadata URL in challenges. Caller: user
  // OAuthUser(), role from the rules, auth "oauth", key_id the client_id.
  AuthDecision Authenticate(std::string_view token, const std::string& endpoint_path);
  // The 401 challenge for a request without any credential.
  std::string Challenge(const std::string& endpoint_path) const;

  const config::OAuthConfig& config() const { return cfg_; }
  JwksCache& keys() { return keys_; }
  TokenIntrospector* introspector() { return introspector_.get(); }

 private:
  AuthDecision Refuse(int status, const std::string& error, const std::string& message,
                      const std::string& endpoint_path) const;
  // The decision on a genuine token's claims: required scope, role rules.
  AuthDecision Admit(const TokenClaims& claims, const std::string& endpoint_path) const;
  AuthDecision AuthenticateJwt(std::string_view token, const std::string& endpoint_path);

  const config::OAuthConfig cfg_;
  WallClock now_;
  JwksCache keys_;
  std::unique_ptr<TokenIntrospector> introspector_;
};

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_OAUTH_AUTHENTICATOR_H_
