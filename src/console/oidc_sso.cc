#include "console/oidc_sso.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <nlohmann/json.hpp>

#include "auth/oauth/http_fetch.h"
#include "auth/oauth/jwt_validator.h"
#include "auth/oauth/role_mapping.h"
#include "base/encoding.h"
#include "console/console_sessions.h"

namespace airlock::console {

using nlohmann::json;

namespace {

int64_t SystemNowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string HostOf(const std::string& url) {
  std::string host = url;
  if (size_t p = host.find("://"); p != std::string::npos) host = host.substr(p + 3);
  return host.substr(0, host.find('/'));
}

std::string StringField(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

}  // namespace

std::string OidcUser(const std::string& issuer, const std::string& subject) {
  auth::oauth::TokenClaims t;
  t.issuer = issuer;
  t.subject = subject;
  std::string user = auth::oauth::OAuthUser(t);  // "oauth:<sub>@<host>"
  return "oidc:" + user.substr(user.find(':') + 1);
}

StatusOr<OidcProviderMetadata> ParseProviderMetadata(std::string_view body, const std::string& issuer) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("the provider's discovery document is not a JSON object");
  if (StringField(j, "issuer") != issuer) {
    return InvalidArgument("the provider's discovery document names another issuer than " + issuer);
  }
  OidcProviderMetadata m{.authorization_endpoint = StringField(j, "authorization_endpoint"),
                         .token_endpoint = StringField(j, "token_endpoint"),
                         .jwks_uri = StringField(j, "jwks_uri"),
                         .iss_parameter_supported = j.value("authorization_response_iss_parameter_supported", false)};
  using Field = std::pair<const char*, const std::string*>;
  for (const auto& [name, value] : {Field{"authorization_endpoint", &m.authorization_endpoint},
                                    Field{"token_endpoint", &m.token_endpoint}, Field{"jwks_uri", &m.jwks_uri}}) {
    if (value->empty()) return InvalidArgument(std::string("the provider's discovery document has no ") + name);
  }
  if (const json& methods = j.value("code_challenge_methods_supported", json::array());
      methods.is_array() && !methods.empty() && std::find(methods.begin(), methods.end(), "S256") == methods.end()) {
    return InvalidArgument("the provider does not support PKCE with S256");
  }
  return m;
}

OidcSso::OidcSso(config::ConsoleSsoConfig config, std::string client_secret, std::string redirect_uri, Deps deps)
    : config_(std::move(config)),
      client_secret_(std::move(client_secret)),
      redirect_uri_(std::move(redirect_uri)),
      deps_(std::move(deps)),
      provider_name_(config_.provider_name.empty() ? HostOf(config_.issuer) : config_.provider_name),
      logins_(deps_.logins) {}

int64_t OidcSso::NowUnix() const { return deps_.now_unix ? deps_.now_unix() : SystemNowUnix(); }

StatusOr<OidcProviderMetadata> OidcSso::Metadata() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (metadata_) return *metadata_;
  }
  std::string failures;
  for (const std::string& url : {auth::oauth::OpenIdConfigurationUrl(config_.issuer),
                                 auth::oauth::AuthorizationServerMetadataUrl(config_.issuer)}) {
    StatusOr<std::string> body = deps_.get(url);
    StatusOr<OidcProviderMetadata> m =
        body.ok() ? ParseProviderMetadata(*body, config_.issuer) : StatusOr<OidcProviderMetadata>(body.status());
    if (!m.ok()) {
      failures += (failures.empty() ? "" : "; ") + url + ": " + m.status().message();
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!metadata_) {
      metadata_ = *m;
      jwks_ = std::make_unique<auth::oauth::JwksCache>(
          auth::oauth::JwksCache::Options{.issuer = config_.issuer, .jwks_uri = m->jwks_uri, .min_refresh_s = 30},
          deps_.get);
    }
    return *metadata_;
  }
  return Unavailable("the OpenID provider's discovery failed: " + failures);
}

StatusOr<OidcSso::Started> OidcSso::Begin() {
  AIRLOCK_ASSIGN_OR_RETURN(OidcProviderMetadata m, Metadata());
  AIRLOCK_ASSIGN_OR_RETURN(PendingLogin login, logins_.Begin());
  using auth::oauth::FormEncode;
  std::string url = m.authorization_endpoint;
  url += url.find('?') == std::string::npos ? '?' : '&';
  url += "response_type=code&client_id=" + FormEncode(config_.client_id) +
         "&redirect_uri=" + FormEncode(redirect_uri_) + "&scope=" + FormEncode(config_.scopes) +
         "&state=" + login.state + "&nonce=" + login.nonce +
         "&code_challenge=" + PkceChallenge(login.code_verifier) + "&code_challenge_method=S256";
  return Started{.url = std::move(url), .login = std::move(login)};
}

StatusOr<SsoUser> OidcSso::Complete(const SsoCallback& cb, std::string_view binding) {
  // The state first: whatever else is wrong, this login is used up.
  AIRLOCK_ASSIGN_OR_RETURN(PendingLogin login, logins_.Take(cb.state, binding));
  AIRLOCK_ASSIGN_OR_RETURN(OidcProviderMetadata m, Metadata());
  // RFC 9207: the authorization response names its issuer (mix-up defence).
  if (!cb.iss.empty() && cb.iss != config_.issuer) {
    return PermissionDenied("the sign-in answer came from another issuer than " + config_.issuer);
  }
  if (cb.iss.empty() && m.iss_parameter_supported) {
    return PermissionDenied("the sign-in answer lacks the provider's iss parameter");
  }
  if (!cb.error.empty()) {
    return PermissionDenied("the OpenID provider refused the sign-in: " + cb.error +
                            (cb.error_description.empty() ? "" : " (" + cb.error_description + ")"));
  }
  if (cb.code.empty()) return InvalidArgument("the sign-in answer has no authorization code");
  using auth::oauth::FormEncode;
  const std::string form = "grant_type=authorization_code&code=" + FormEncode(cb.code) +
                           "&redirect_uri=" + FormEncode(redirect_uri_) + "&code_verifier=" + login.code_verifier;
  const std::string basic =
      "Basic " + Base64Encode(FormEncode(config_.client_id) + ":" + FormEncode(client_secret_));
  StatusOr<std::string> answer = deps_.post(m.token_endpoint, form, basic);
  if (!answer.ok()) {
    return Status(answer.status().code(), "the OpenID provider's token endpoint refused the code exchange: " +
                                              answer.status().message());
  }
  json j = json::parse(*answer, nullptr, /*allow_exceptions=*/false);
  const std::string id_token = j.is_object() ? StringField(j, "id_token") : std::string();
  if (id_token.empty()) return InvalidArgument("the token endpoint's answer has no id_token");
  return ValidateIdToken(id_token, login.nonce);
}

StatusOr<SsoUser> OidcSso::ValidateIdToken(std::string_view id_token, std::string_view nonce) {
  AIRLOCK_RETURN_IF_ERROR(Metadata().status());
  auth::oauth::JwksCache* jwks = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jwks = jwks_.get();
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<const auth::oauth::JwkSet> keys,
                           jwks->Get(auth::oauth::TokenKeyId(id_token)));
  const auth::oauth::TokenExpectations expect{
      .issuer = config_.issuer, .resource = config_.client_id, .clock_skew_s = 60, .max_token_bytes = 16384};
  StatusOr<auth::oauth::TokenClaims> t = auth::oauth::ValidateJwt(id_token, *keys, expect, NowUnix());
  if (!t.ok()) return InvalidArgument("the ID token is not valid: " + t.status().message());
  const json& c = t->claims;
  if (!c.contains("iat") || !c["iat"].is_number()) return InvalidArgument("the ID token is not valid: no iat");
  if (t->subject.empty()) return InvalidArgument("the ID token is not valid: no sub");
  const std::string token_nonce = StringField(c, "nonce");
  if (token_nonce.empty() || !ConstantTimeEquals(token_nonce, nonce)) {
    return PermissionDenied("the ID token's nonce does not match this sign-in");
  }
  const std::string azp = StringField(c, "azp");
  if (!azp.empty() && azp != config_.client_id) return InvalidArgument("the ID token is not valid: azp is another client");
  if (c["aud"].is_array() && c["aud"].size() > 1 && azp.empty()) {
    return InvalidArgument("the ID token is not valid: several audiences and no azp");
  }
  SsoUser u{.subject = t->subject, .user = OidcUser(config_.issuer, t->subject)};
  for (const char* k : {"name", "preferred_username", "email"}) {
    if (u.display_name.empty()) u.display_name = StringField(c, k);
  }
  if (u.display_name.empty()) u.display_name = t->subject;
  std::vector<config::OAuthRoleRule> rules;
  for (const std::string& v : config_.admin_values) rules.push_back({.claim = config_.admin_claim, .value = v, .role = "admin"});
  u.admin = auth::oauth::MapRole(rules, *t).has_value();
  u.expires_unix = c["exp"].get<int64_t>();
  return u;
}

}  // namespace airlock::console
