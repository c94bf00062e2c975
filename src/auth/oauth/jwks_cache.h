// The authorization server's signing keys, fetched and cached: the
// jwks_uri comes from the configuration or from the issuer's metadata
// (RFC 8414 /.well-known/oauth-authorization-server, then OIDC
// /.well-known/openid-configuration, whose "issuer" must equal the
// configured one). The set is fetched when first needed and again when a
// token names a kid it lacks (key rotation), but at most once per
// min_refresh_s, so a flood of unknown kids cannot hammer the provider.
// Fetches run without the cache's lock held; callers arriving during a
// fetch wait for that one fetch (bounded by the fetcher's timeouts) instead
// of starting another, and requests whose key is cached never wait.
#ifndef AIRLOCK_AUTH_OAUTH_JWKS_CACHE_H_
#define AIRLOCK_AUTH_OAUTH_JWKS_CACHE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "auth/oauth/jwk_set.h"
#include "base/status.h"

namespace airlock::auth::oauth {

// GET `url` → body (2xx only), with timeouts and a size cap (http_fetch.h).
using Fetcher = std::function<StatusOr<std::string>(const std::string& url)>;
// Monotonic seconds.
using Clock = std::function<int64_t()>;
int64_t SteadySeconds();

// RFC 8414 section 3.1: "https://h/.well-known/oauth-authorization-server/realms/x"
// for issuer "https://h/realms/x".
std::string AuthorizationServerMetadataUrl(const std::string& issuer);
// OIDC Discovery: issuer (without a trailing '/') + "/.well-known/openid-configuration".
std::string OpenIdConfigurationUrl(const std::string& issuer);

class JwksCache {
 public:
  struct Options {
    std::string issuer;
    std::string jwks_uri;  // empty: discovered from the issuer
    int64_t min_refresh_s = 30;
  };
  JwksCache(Options options, Fetcher fetch, Clock clock = SteadySeconds);

  // The current key set, refreshed first when it is missing or lacks `kid`
  // (non-empty) and no fetch happened in the last min_refresh_s. An error
  // only when no key set could ever be fetched.
  StatusOr<std::shared_ptr<const JwkSet>> Get(const std::string& kid);
  // Fetches of the JWKS made so far (for tests and metrics).
  int fetches() const;

 private:
  StatusOr<std::string> JwksUri();  // called without mu_
  StatusOr<std::shared_ptr<const JwkSet>> Fetch();

  const Options options_;
  const Fetcher fetch_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::condition_variable fetched_;
  std::shared_ptr<const JwkSet> keys_;  // guarded by mu_
  std::string jwks_uri_;                // guarded by mu_; discovered once
  bool fetching_ = false;               // guarded by mu_
  int64_t last_fetch_ = 0;              // guarded by mu_ (clock_ seconds)
  bool fetched_once_ = false;           // guarded by mu_
  int fetches_ = 0;                     // guarded by mu_
};

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_JWKS_CACHE_H_
