#include "auth/oauth/introspection.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "auth/oauth/discovery.h"
#include "auth/oauth/http_fetch.h"
#include "base/encoding.h"

namespace airlock::auth::oauth {
namespace {

using nlohmann::json;

// The client secret goes there: https://, or http:// to a loopback host.
Status CheckEndpoint(const std::string& url) {
  if (url.rfind("https://", 0) == 0) return OkStatus();
  if (IsLoopbackHttpUrl(url)) return OkStatus();
  return InvalidArgument("introspection endpoint " + url.substr(0, 200) +
                         " must be https:// (plain http only on loopback)");
}

bool ReadTime(const json& a, const char* name, int64_t* out) {
  if (!a.contains(name) || !a[name].is_number()) return false;
  *out = static_cast<int64_t>(a[name].get<double>());
  return true;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

StatusOr<std::string> HttpIntrospectionPost(const std::string& url, const std::string& form,
                                            const std::string& authorization) {
  return HttpPostForm(url, form, authorization, IntrospectionLimits());
}

std::string ClientSecretBasic(const std::string& client_id, const std::string& client_secret) {
  return "Basic " + Base64Encode(FormEncode(client_id) + ":" + FormEncode(client_secret));
}

StatusOr<TokenClaims> ParseIntrospection(std::string_view body, const TokenExpectations& expect, int64_t now) {
  json a = json::parse(body, nullptr, false);
  if (!a.is_object() || !a.contains("active") || !a["active"].is_boolean()) {
    return Unavailable("the introspection endpoint's answer is not an introspection response");
  }
  if (!a["active"].get<bool>()) return InvalidArgument("token is not active (revoked, expired or unknown)");
  TokenClaims out;
  out.issuer = expect.issuer;
  if (a.contains("iss")) {
    if (!a["iss"].is_string() || a["iss"].get<std::string>() != expect.issuer) {
      return InvalidArgument("token issuer is not " + expect.issuer);
    }
  }
  if (a.contains("token_type") && a["token_type"].is_string()) {
    const std::string type = a["token_type"].get<std::string>();
    if (type != "Bearer" && type != "bearer" && type != "access_token") {
      return InvalidArgument("token is not a bearer access token");
    }
  }
  bool audience_ok = false;
  if (a.contains("aud")) {
    const json& aud = a["aud"];
    if (aud.is_string()) audience_ok = aud.get<std::string>() == expect.resource;
    if (aud.is_array()) {
      for (const json& x : aud) audience_ok = audience_ok || (x.is_string() && x.get<std::string>() == expect.resource);
    }
  }
  if (!audience_ok) return InvalidArgument("token audience does not include " + expect.resource);
  int64_t t = 0;
  if (ReadTime(a, "exp", &t) && now >= t + expect.clock_skew_s) return InvalidArgument("token expired");
  if (ReadTime(a, "nbf", &t) && t > now + expect.clock_skew_s) return InvalidArgument("token is not yet valid");
  if (a.contains("client_id") && a["client_id"].is_string()) out.client_id = a["client_id"].get<std::string>();
  if (a.contains("sub") && a["sub"].is_string()) out.subject = a["sub"].get<std::string>();
  if (out.subject.empty()) out.subject = out.client_id;
  if (out.subject.empty()) return InvalidArgument("token has no subject");
  if (a.contains("scope") && a["scope"].is_string()) out.scopes = SplitScopes(a["scope"].get<std::string>());
  out.claims = std::move(a);
  return out;
}

TokenIntrospector::TokenIntrospector(Options options, Fetcher get, Poster post, WallClock now, Clock steady)
    : options_(std::move(options)),
      get_(std::move(get)),
      post_(std::move(post)),
      now_(std::move(now)),
      steady_(std::move(steady)),
      authorization_(ClientSecretBasic(options_.client_id, options_.client_secret)),
      window_(options_.max_per_minute, std::chrono::minutes(1),
              [s = steady_] { return RateWindow::Clock::time_point(std::chrono::seconds(s())); }),
      endpoint_(options_.endpoint) {}

int TokenIntrospector::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

size_t TokenIntrospector::cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

StatusOr<std::string> TokenIntrospector::Endpoint() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!endpoint_.empty()) return endpoint_;
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::string url, DiscoverEndpoint(options_.issuer, get_, "introspection_endpoint"));
  Status safe = CheckEndpoint(url);
  if (!safe.ok()) return Unavailable(safe.message());
  std::lock_guard<std::mutex> lock(mu_);
  endpoint_ = std::move(url);
  return endpoint_;
}

void TokenIntrospector::Remember(const std::string& key, const StatusOr<TokenClaims>& answer) {
  if (options_.cache_s <= 0) return;
  const int64_t now = steady_();
  int64_t ttl = options_.cache_s;
  if (answer.ok() && answer->claims.contains("exp") && answer->claims["exp"].is_number()) {
    ttl = std::min(ttl, static_cast<int64_t>(answer->claims["exp"].get<double>()) - now_());
  }
  if (ttl <= 0) return;
  if (cache_.size() >= options_.cache_max_entries && !cache_.count(key)) {
    for (auto it = cache_.begin(); it != cache_.end();) it = it->second.until <= now ? cache_.erase(it) : std::next(it);
    if (cache_.size() >= options_.cache_max_entries) {
      auto first = cache_.begin();
      for (auto it = cache_.begin(); it != cache_.end(); ++it) {
        if (it->second.until < first->second.until) first = it;
      }
      cache_.erase(first);
    }
  }
  cache_.insert_or_assign(key, Entry{answer, now + ttl});
}

StatusOr<TokenClaims> TokenIntrospector::Introspect(std::string_view token) {
  const std::string key = Sha256Hex(token);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      if (steady_() < it->second.until) return it->second.answer;
      cache_.erase(it);
    }
  }
  if (!window_.TryAcquire("")) {
    return Unavailable("token introspection limit reached (" + std::to_string(options_.max_per_minute) +
                       " a minute); try again shortly");
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::string endpoint, Endpoint());
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++requests_;
  }
  const std::string form = "token=" + FormEncode(std::string(token)) + "&token_type_hint=access_token";
  StatusOr<std::string> body = post_(endpoint, form, authorization_);
  if (!body.ok()) return Unavailable("token introspection failed: " + body.status().message());
  const TokenExpectations expect{.issuer = options_.issuer,
                                 .resource = options_.resource,
                                 .clock_skew_s = options_.clock_skew_s};
  StatusOr<TokenClaims> answer = ParseIntrospection(*body, expect, now_());
  if (answer.ok() || answer.status().code() == StatusCode::kInvalidArgument) {
    std::lock_guard<std::mutex> lock(mu_);
    Remember(key, answer);
  }
  return answer;
}

TokenIntrospector::Options IntrospectionOptions(const config::OAuthConfig& cfg, std::string client_secret) {
  return TokenIntrospector::Options{.issuer = cfg.issuer,
                                    .resource = cfg.resource,
                                    .endpoint = cfg.introspection.endpoint,
                                    .client_id = cfg.introspection.client_id,
                                    .client_secret = std::move(client_secret),
                                    .clock_skew_s = static_cast<int64_t>(cfg.clock_skew_s),
                                    .cache_s = static_cast<int64_t>(cfg.introspection.cache_s),
                                    .cache_max_entries = static_cast<size_t>(cfg.introspection.cache_max_entries),
                                    .max_per_minute = static_cast<uint32_t>(cfg.introspection.max_per_minute)};
}

StatusOr<std::string> ReadClientSecret(const config::OAuthIntrospectionConfig& cfg) {
  const std::string where = "config.server.http.oauth.introspection";
  std::string secret;
  if (!cfg.client_secret_file.empty()) {
    std::ifstream in(cfg.client_secret_file, std::ios::binary);
    if (!in) return NotFound(where + ".client_secret_file: cannot read " + cfg.client_secret_file);
    std::stringstream ss;
    ss << in.rdbuf();
    secret = Trim(ss.str());
  } else if (!cfg.client_secret_env.empty()) {
    const char* v = std::getenv(cfg.client_secret_env.c_str());
    if (v == nullptr) return NotFound(where + ".client_secret_env: " + cfg.client_secret_env + " is not set");
    secret = Trim(v);
  }
  if (secret.empty()) return InvalidArgument(where + ": the client secret is empty");
  if (secret.find_first_of("\r\n") != std::string::npos) {
    return InvalidArgument(where + ": the client secret must be one line");
  }
  return secret;
}

}  // namespace airlock::auth::oauth
