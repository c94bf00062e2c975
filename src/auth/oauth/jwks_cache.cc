#include "auth/oauth/jwks_cache.h"

#include <chrono>

#include "auth/oauth/discovery.h"

namespace airlock::auth::oauth {

int64_t SteadySeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

std::string WithoutTrailingSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

std::string AuthorizationServerMetadataUrl(const std::string& issuer) {
  const std::string iss = WithoutTrailingSlash(issuer);
  const size_t scheme = iss.find("://");
  const size_t path = scheme == std::string::npos ? std::string::npos : iss.find('/', scheme + 3);
  if (path == std::string::npos) return iss + "/.well-known/oauth-authorization-server";
  return iss.substr(0, path) + "/.well-known/oauth-authorization-server" + iss.substr(path);
}

std::string OpenIdConfigurationUrl(const std::string& issuer) {
  return WithoutTrailingSlash(issuer) + "/.well-known/openid-configuration";
}

JwksCache::JwksCache(Options options, Fetcher fetch, Clock clock)
    : options_(std::move(options)), fetch_(std::move(fetch)), clock_(std::move(clock)), jwks_uri_(options_.jwks_uri) {}

int JwksCache::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

StatusOr<std::string> JwksCache::JwksUri() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!jwks_uri_.empty()) return jwks_uri_;
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::string uri, DiscoverEndpoint(options_.issuer, fetch_, "jwks_uri"));
  std::lock_guard<std::mutex> lock(mu_);
  jwks_uri_ = std::move(uri);
  return jwks_uri_;
}

StatusOr<std::shared_ptr<const JwkSet>> JwksCache::Fetch() {
  AIRLOCK_ASSIGN_OR_RETURN(std::string uri, JwksUri());
  AIRLOCK_ASSIGN_OR_RETURN(std::string body, fetch_(uri));
  AIRLOCK_ASSIGN_OR_RETURN(JwkSet set, JwkSet::Parse(body));
  return std::shared_ptr<const JwkSet>(std::make_shared<JwkSet>(std::move(set)));
}

StatusOr<std::shared_ptr<const JwkSet>> JwksCache::Get(const std::string& kid) {
  std::unique_lock<std::mutex> lock(mu_);
  auto wanted = [&] { return !keys_ || (!kid.empty() && !keys_->HasKid(kid)); };
  if (!wanted()) return keys_;
  if (fetching_) {
    fetched_.wait(lock, [&] { return !fetching_; });  // someone else's fetch; bounded by its timeouts
  } else if (!fetched_once_ || clock_() - last_fetch_ >= options_.min_refresh_s) {
    fetching_ = true;
    fetched_once_ = true;
    last_fetch_ = clock_();
    ++fetches_;
    lock.unlock();
    StatusOr<std::shared_ptr<const JwkSet>> fresh = Fetch();
    lock.lock();
    fetching_ = false;
    if (fresh.ok()) keys_ = *fresh;
    fetched_.notify_all();
    if (!fresh.ok() && !keys_) return fresh.status();
  }
  if (!keys_) return Unavailable("the authorization server's signing keys are not available yet");
  return keys_;
}

}  // namespace airlock::auth::oauth
