// OAuth 2.0 Token Introspection (RFC 7662) for access tokens that are not
// JWTs (opaque), or all tokens when so configured: the token is POSTed to
// the authorization server's introspection endpoint (configured, or the
// issuer metadata's introspection_endpoint) with airlock's own client
// credentials (client_secret_basic), and the answer is checked like a JWT's
// claims: `active` true, `iss` (when present) the issuer, `aud` containing
// this server's resource URI (RFC 8707), `exp`/`nbf` within the clock skew,
// an access token (token_type, when present, "Bearer").
//
// Answers are cached by the token's SHA-256 (the token itself is never
// kept) for cache_s, never past the token's exp, at most cache_max_entries
// of them (the one expiring first evicted). At most max_per_minute requests
// go to the endpoint; past that, and when the endpoint fails (timeout,
// non-2xx, not JSON), the answer is Unavailable: the caller refuses with 503,
// never admits. Thread-safe; the POST runs without the lock held.
//
//   TokenIntrospector in(IntrospectionOptions(cfg.oauth, secret), HttpGet, HttpIntrospectionPost);
//   StatusOr<TokenClaims> c = in.Introspect(token);  // InvalidArgument: 401; Unavailable: 503
#ifndef AIRLOCK_AUTH_OAUTH_INTROSPECTION_H_
#define AIRLOCK_AUTH_OAUTH_INTROSPECTION_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/oauth/jwks_cache.h"
#include "auth/oauth/jwt_validator.h"
#include "base/rate_window.h"
#include "base/status.h"
#include "config/config.h"

namespace airlock::auth::oauth {

// POST `form` (x-www-form-urlencoded) to `url` with the Authorization header
// `authorization` → the body of a 2xx answer.
using Poster = std::function<StatusOr<std::string>(const std::string& url, const std::string& form,
                                                   const std::string& authorization)>;

// HttpPostForm with IntrospectionLimits() (http_fetch.h): 2 s to connect,
// 5 s to answer, 64 KiB.
StatusOr<std::string> HttpIntrospectionPost(const std::string& url, const std::string& form,
                                            const std::string& authorization);

// The claims of an introspection answer `body` for `expect` (issuer,
// resource, clock_skew_s) at `now_unix`. InvalidArgument with a reason for
// the client ("token is not active", "token audience does not include
// ..."); Unavailable when `body` is not a JSON object with a boolean
// "active". The subject is "sub", else "client_id" (a client credentials
// token is the client's own); the issuer "iss", else expect.issuer.
StatusOr<TokenClaims> ParseIntrospection(std::string_view body, const TokenExpectations& expect, int64_t now_unix);

// The "Authorization: Basic ..." value of RFC 6749 section 2.3.1 (id and
// secret form-encoded, then base64).
std::string ClientSecretBasic(const std::string& client_id, const std::string& client_secret);

class TokenIntrospector {
 public:
  using WallClock = std::function<int64_t()>;  // unix seconds
  struct Options {
    std::string issuer;
    std::string resource;
    std::string endpoint;  // empty: discovered from the issuer's metadata
    std::string client_id;
    std::string client_secret;
    int64_t clock_skew_s = 60;
    int64_t cache_s = 5;
    size_t cache_max_entries = 4096;
    uint32_t max_per_minute = 600;
  };

  // `get` fetches discovery documents; `post` asks the endpoint; `now` is
  // the wall clock for exp; `steady` times the cache and the rate window.
  TokenIntrospector(Options options, Fetcher get, Poster post, WallClock now, Clock steady = SteadySeconds);

  StatusOr<TokenClaims> Introspect(std::string_view token);

  int requests() const;   // POSTs to the endpoint so far
  size_t cached() const;  // answers in the cache now

 private:
  struct Entry {
    StatusOr<TokenClaims> answer;  // claims, or the InvalidArgument refusal
    int64_t until = 0;             // steady seconds
  };
  StatusOr<std::string> Endpoint();  // called without mu_
  void Remember(const std::string& key, const StatusOr<TokenClaims>& answer);  // with mu_ held

  const Options options_;
  const Fetcher get_;
  const Poster post_;
  const WallClock now_;
  const Clock steady_;
  const std::string authorization_;
  RateWindow window_;
  mutable std::mutex mu_;
  std::string endpoint_;                           // guarded by mu_; discovered once
  std::unordered_map<std::string, Entry> cache_;   // guarded by mu_; SHA-256 hex of the token → answer
  int requests_ = 0;                               // guarded by mu_
};

// Options from server.http.oauth (and .introspection) with the secret read
// by the caller (ReadClientSecret).
TokenIntrospector::Options IntrospectionOptions(const config::OAuthConfig& cfg, std::string client_secret);

// The client secret of server.http.oauth.introspection: the first line of
// client_secret_file, or the environment variable client_secret_env;
// surrounding whitespace removed, empty is an error.
StatusOr<std::string> ReadClientSecret(const config::OAuthIntrospectionConfig& cfg);

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_INTROSPECTION_H_
