// The resource server's decision on one bearer token: a Caller, or the
// status (401/403) and WWW-Authenticate challenge to answer with. Combines
// the JWKS cache, the JWT validator and the role rules of
// server.http.oauth. Thread-safe; Authenticate may block only while the
// key set is (re)fetched (jwks_cache.h), never on a lock held by a fetch.
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

#include "auth/oauth/jwks_cache.h"
#include "config/config.h"
#include "governance/policy.h"

namespace airlock::auth::oauth {

struct AuthDecision {
  std::optional<governance::Caller> caller;  // set: admitted
  int status = 401;                          // else 401 or 403
  std::string challenge;                     // WWW-Authenticate value
  std::string message;                       // why, for the body and logs
  std::string client_id;                     // of a valid token, "" otherwise
};

class OAuthAuthenticator {
 public:
  // Wall-clock unix seconds (tests pass a fixed one).
  using WallClock = std::function<int64_t()>;
  OAuthAuthenticator(config::OAuthConfig cfg, Fetcher fetch, WallClock now = nullptr, Clock steady = SteadySeconds);

  // `token` from "Authorization: Bearer"; `endpoint_path` the MCP endpoint
  // ("/mcp"), naming the metadata URL in challenges. Caller: user
  // OAuthUser(), role from the rules, auth "oauth", key_id the client_id.
  AuthDecision Authenticate(std::string_view token, const std::string& endpoint_path);
  // The 401 challenge for a request without any credential.
  std::string Challenge(const std::string& endpoint_path) const;

  const config::OAuthConfig& config() const { return cfg_; }
  JwksCache& keys() { return keys_; }

 private:
  AuthDecision Refuse(int status, const std::string& error, const std::string& message,
                      const std::string& endpoint_path) const;

  const config::OAuthConfig cfg_;
  WallClock now_;
  JwksCache keys_;
};

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_OAUTH_AUTHENTICATOR_H_
