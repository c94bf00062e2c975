// Console single sign-on (issue 31): the pending-login store (state, nonce,
// PKCE, single use, same browser, expiry) and the callback's checks (state,
// RFC 9207 iss, the code exchange, the ID token: signature, iss, aud, exp,
// nonce) against a fake OpenID provider; the console.sso config keys.
#include <gtest/gtest.h>

#include <map>

#include "config/config.h"
#include "console/oidc_sso.h"
#include "console/sso_login_store.h"
#include "oauth_test_keys.h"

namespace airlock::console {
namespace {

using nlohmann::json;
using auth::oauth::testing::TestKey;

constexpr int64_t kNow = 1'800'000'000;
const char kIssuer[] = "https://idp.example.com/realms/acme";
const char kClient[] = "airlock-console";
const char kRedirect[] = "https://airlock.example.com/console/sso/callback";

const TestKey& Rsa() {
  static const TestKey k = TestKey::Rsa("sso-rsa-1");
  return k;
}

TEST(ConsoleSsoPkce, S256IsUnpaddedBase64UrlOfSha256) {
  // base64url(SHA-256("abc")), checked with Python's hashlib: '-' and '_', no '='.
  EXPECT_EQ(PkceChallenge("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
}

TEST(ConsoleSsoLogins, RandomSingleUseBoundToTheBrowserAndShortLived) {
  int64_t now = 1000;
  SsoLoginStore store({.ttl = std::chrono::seconds(300), .max_pending = 3, .now_ms = [&] { return now; }});
  StatusOr<PendingLogin> a = store.Begin();
  StatusOr<PendingLogin> b = store.Begin();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->state.size(), 32u);
  EXPECT_EQ(a->nonce.size(), 32u);
  EXPECT_EQ(a->code_verifier.size(), 64u);  // RFC 7636: 43-128 characters
  EXPECT_NE(a->state, b->state);
  EXPECT_NE(a->nonce, b->nonce);
  EXPECT_NE(a->binding, b->binding);

  // Right state, right browser: once.
  StatusOr<PendingLogin> got = store.Take(a->state, a->binding);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->nonce, a->nonce);
  EXPECT_EQ(got->code_verifier, a->code_verifier);
  StatusOr<PendingLogin> replay = store.Take(a->state, a->binding);
  EXPECT_EQ(replay.status().code(), StatusCode::kNotFound);
  EXPECT_NE(replay.status().message().find("already used"), std::string::npos);

  // Unknown or empty state.
  EXPECT_EQ(store.Take(std::string(32, 'f'), b->binding).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.Take("", b->binding).status().code(), StatusCode::kNotFound);

  // Another browser (no or another pre-login cookie): refused, and the login is spent.
  EXPECT_EQ(store.Take(b->state, a->binding).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store.Take(b->state, b->binding).status().code(), StatusCode::kNotFound);
  StatusOr<PendingLogin> c = store.Begin();
  EXPECT_EQ(store.Take(c->state, "").status().code(), StatusCode::kPermissionDenied);

  // Expired.
  StatusOr<PendingLogin> d = store.Begin();
  now += 300'000;
  EXPECT_EQ(store.Take(d->state, d->binding).status().code(), StatusCode::kDeadlineExceeded);

  // A flood of logins: the oldest go past max_pending.
  std::vector<PendingLogin> many;
  for (int i = 0; i < 5; ++i) many.push_back(*store.Begin());
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.Take(many[0].state, many[0].binding).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store.Take(many[4].state, many[4].binding).ok());
}

// A fake provider: discovery, JWKS and a token endpoint answering with
// `id_token` (set by the test) and recording what it was sent.
struct FakeProvider {
  bool iss_supported = true;
  std::string id_token;
  std::string last_form, last_auth;
  int posts = 0;

  OidcSso::Deps Deps() {
    return {.get = [this](const std::string& url) -> StatusOr<std::string> {
              if (url == std::string(kIssuer) + "/.well-known/openid-configuration") {
                return json{{"issuer", kIssuer},
                            {"authorization_endpoint", std::string(kIssuer) + "/auth"},
                            {"token_endpoint", std::string(kIssuer) + "/token"},
                            {"jwks_uri", std::string(kIssuer) + "/jwks"},
                            {"code_challenge_methods_supported", {"S256"}},
                            {"authorization_response_iss_parameter_supported", iss_supported}}
                    .dump();
              }
              if (url == std::string(kIssuer) + "/jwks") return json{{"keys", {Rsa().PublicJwk()}}}.dump();
              return Unavailable(url + ": HTTP 404");
            },
            .post = [this](const std::string& url, const std::string& form,
                           const std::string& auth) -> StatusOr<std::string> {
              ++posts;
              last_form = form;
              last_auth = auth;
              if (url != std::string(kIssuer) + "/token") return Unavailable("wrong endpoint");
              return json{{"access_token", "at"}, {"token_type", "Bearer"}, {"id_token", id_token}}.dump();
            },
            .now_unix = [] { return kNow; },
            .logins = {}};
  }
};

config::ConsoleSsoConfig SsoConfig() {
  config::ConsoleSsoConfig c;
  c.issuer = kIssuer;
  c.client_id = kClient;
  c.client_secret_file = "/unused";
  c.admin_claim = "groups";
  c.admin_values = {"airlock-admins"};
  return c;
}

json IdClaims(const std::string& nonce, const std::string& sub = "ann") {
  return {{"iss", kIssuer}, {"sub", sub},          {"aud", kClient},        {"exp", kNow + 600},
          {"iat", kNow - 5}, {"nonce", nonce},     {"name", "Ann Admin"},   {"groups", {"staff", "airlock-admins"}}};
}

std::string Param(const std::string& url, const std::string& name) {
  const std::string key = name + "=";
  size_t p = url.find("?" + key);
  if (p == std::string::npos) p = url.find("&" + key);
  if (p == std::string::npos) return "";
  p += key.size() + 1;
  return url.substr(p, url.find('&', p) - p);
}

class ConsoleSsoFlow : public ::testing::Test {
 protected:
  ConsoleSsoFlow() : sso_(SsoConfig(), "s3cret", kRedirect, idp_.Deps()) {}

  // Begins a login; the provider will answer with an ID token of `claims`
  // (nonce filled in with the login's when null).
  OidcSso::Started Begin(json claims = nullptr) {
    StatusOr<OidcSso::Started> s = sso_.Begin();
    EXPECT_TRUE(s.ok()) << s.status().message();
    if (claims.is_null()) claims = IdClaims(s->login.nonce);
    idp_.id_token = Rsa().Sign(claims);
    return *s;
  }
  SsoCallback Back(const OidcSso::Started& s) {
    return {.state = s.login.state, .code = "the-code", .iss = kIssuer, .error = "", .error_description = ""};
  }

  FakeProvider idp_;
  OidcSso sso_;
};

TEST_F(ConsoleSsoFlow, AuthorizationUrlCarriesPkceStateNonce) {
  OidcSso::Started s = Begin();
  EXPECT_EQ(s.url.rfind(std::string(kIssuer) + "/auth?response_type=code&", 0), 0u) << s.url;
  EXPECT_EQ(Param(s.url, "client_id"), kClient);
  EXPECT_EQ(Param(s.url, "redirect_uri"), "https%3A%2F%2Fairlock.example.com%2Fconsole%2Fsso%2Fcallback");
  EXPECT_EQ(Param(s.url, "scope"), "openid+profile+email");
  EXPECT_EQ(Param(s.url, "state"), s.login.state);
  EXPECT_EQ(Param(s.url, "nonce"), s.login.nonce);
  EXPECT_EQ(Param(s.url, "code_challenge"), PkceChallenge(s.login.code_verifier));
  EXPECT_EQ(Param(s.url, "code_challenge_method"), "S256");
  EXPECT_EQ(s.url.find(s.login.code_verifier), std::string::npos) << "the verifier stays here";
}

TEST_F(ConsoleSsoFlow, AnAdministratorSignsIn) {
  OidcSso::Started s = Begin();
  StatusOr<SsoUser> u = sso_.Complete(Back(s), s.login.binding);
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->user, "oidc:ann@idp.example.com");
  EXPECT_EQ(u->display_name, "Ann Admin");
  EXPECT_TRUE(u->admin);
  EXPECT_EQ(u->expires_unix, kNow + 600);
  // The code exchange: client_secret_basic, the code, the verifier, the redirect URI.
  EXPECT_EQ(idp_.last_auth, "Basic " + Base64Encode("airlock-console:s3cret"));
  EXPECT_NE(idp_.last_form.find("grant_type=authorization_code&code=the-code&"), std::string::npos);
  EXPECT_NE(idp_.last_form.find("code_verifier=" + s.login.code_verifier), std::string::npos);
  EXPECT_NE(idp_.last_form.find("redirect_uri=https%3A%2F%2Fairlock"), std::string::npos);
  // The state is spent.
  EXPECT_EQ(sso_.Complete(Back(s), s.login.binding).status().code(), StatusCode::kNotFound);
}

TEST_F(ConsoleSsoFlow, SomeoneElseIsNoAdministrator) {
  json claims = nullptr;
  OidcSso::Started s = Begin();
  claims = IdClaims(s.login.nonce, "bob");
  claims["groups"] = "staff airlock-admins-not";
  idp_.id_token = Rsa().Sign(claims);
  StatusOr<SsoUser> u = sso_.Complete(Back(s), s.login.binding);
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_FALSE(u->admin);
  EXPECT_EQ(u->user, "oidc:bob@idp.example.com");
}

TEST_F(ConsoleSsoFlow, BadCallbacksAreRefusedBeforeAnyCodeExchange) {
  OidcSso::Started s = Begin();
  SsoCallback wrong_state = Back(s);
  wrong_state.state = std::string(32, 'f');
  EXPECT_EQ(sso_.Complete(wrong_state, s.login.binding).status().code(), StatusCode::kNotFound);

  s = Begin();
  SsoCallback other_iss = Back(s);
  other_iss.iss = "https://evil.example.com";
  Status st = sso_.Complete(other_iss, s.login.binding).status();
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("another issuer"), std::string::npos);

  s = Begin();  // the provider advertises RFC 9207: iss is required
  SsoCallback no_iss = Back(s);
  no_iss.iss = "";
  EXPECT_EQ(sso_.Complete(no_iss, s.login.binding).status().code(), StatusCode::kPermissionDenied);

  s = Begin();
  SsoCallback denied = Back(s);
  denied.code = "";
  denied.error = "access_denied";
  st = sso_.Complete(denied, s.login.binding).status();
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("access_denied"), std::string::npos);

  s = Begin();
  EXPECT_EQ(sso_.Complete(Back(s), "another-browser").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(idp_.posts, 0) << "no code was exchanged";
}

TEST_F(ConsoleSsoFlow, BadIdTokensAreRefused) {
  struct Case {
    const char* name;
    std::function<void(json&)> change;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"nonce mismatch", [](json& c) { c["nonce"] = "0123"; }, "nonce does not match"},
      {"no nonce", [](json& c) { c.erase("nonce"); }, "nonce does not match"},
      {"expired", [](json& c) { c["exp"] = kNow - 3600; }, "expired"},
      {"wrong audience", [](json& c) { c["aud"] = "another-client"; }, "audience"},
      {"wrong issuer", [](json& c) { c["iss"] = "https://evil.example.com"; }, "issuer"},
      {"no iat", [](json& c) { c.erase("iat"); }, "no iat"},
      {"azp of another client", [](json& c) { c["azp"] = "another-client"; }, "azp"},
  };
  for (const Case& k : cases) {
    OidcSso::Started s = Begin();
    json claims = IdClaims(s.login.nonce);
    k.change(claims);
    idp_.id_token = Rsa().Sign(claims);
    Status st = sso_.Complete(Back(s), s.login.binding).status();
    EXPECT_FALSE(st.ok()) << k.name;
    EXPECT_NE(st.message().find(k.reason), std::string::npos) << k.name << ": " << st.message();
  }
  // Signed by a key the provider does not publish.
  OidcSso::Started s = Begin();
  idp_.id_token = TestKey::Rsa("stranger").Sign(IdClaims(s.login.nonce));
  EXPECT_FALSE(sso_.Complete(Back(s), s.login.binding).ok());
  // An HMAC token is never accepted.
  s = Begin();
  idp_.id_token = auth::oauth::testing::SignHs256({{"alg", "HS256"}, {"kid", "sso-rsa-1"}}, IdClaims(s.login.nonce), "secret");
  EXPECT_FALSE(sso_.Complete(Back(s), s.login.binding).ok());
}

TEST(ConsoleSsoProvider, DiscoveryDocumentChecks) {
  const json good = {{"issuer", kIssuer},
                     {"authorization_endpoint", "https://idp/auth"},
                     {"token_endpoint", "https://idp/token"},
                     {"jwks_uri", "https://idp/jwks"}};
  StatusOr<OidcProviderMetadata> m = ParseProviderMetadata(good.dump(), kIssuer);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->iss_parameter_supported);
  EXPECT_FALSE(ParseProviderMetadata(good.dump(), "https://other").ok());
  json no_token = good;
  no_token.erase("token_endpoint");
  EXPECT_FALSE(ParseProviderMetadata(no_token.dump(), kIssuer).ok());
  json plain_only = good;
  plain_only["code_challenge_methods_supported"] = {"plain"};
  EXPECT_FALSE(ParseProviderMetadata(plain_only.dump(), kIssuer).ok());
  EXPECT_FALSE(ParseProviderMetadata("not json", kIssuer).ok());
}

TEST(ConsoleSsoConfig, KeysAreParsedAndChecked) {
  auto parse = [](json sso) { return config::ConfigFromJson({{"server", {{"http", {{"console", {{"sso", sso}}}}}}}}); };
  const json good = {{"issuer", "https://idp.example.com/realms/acme"},
                     {"client_id", "airlock-console"},
                     {"client_secret_file", "/etc/airlock/console-secret"},
                     {"admin_values", {"airlock-admins"}}};
  StatusOr<config::Config> c = parse(good);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const config::ConsoleSsoConfig& s = c->server.http.console_sso;
  EXPECT_EQ(s.scopes, "openid profile email");
  EXPECT_EQ(s.admin_claim, "groups");
  EXPECT_EQ(s.role, "admin");
  EXPECT_TRUE(s.allow_key_signin);
  EXPECT_TRUE(s.redirect_uri.empty());
  for (const char* key : {"client_id", "client_secret_file", "admin_values"}) {
    json bad = good;
    bad.erase(key);
    EXPECT_FALSE(parse(bad).ok()) << key;
  }
  json bad = good;
  bad["issuer"] = "http://idp.example.com";
  EXPECT_FALSE(parse(bad).ok()) << "plain HTTP to a remote provider";
  bad = good;
  bad["scopes"] = "profile email";
  EXPECT_FALSE(parse(bad).ok()) << "without openid";
  bad = good;
  bad["unknown"] = 1;
  EXPECT_FALSE(parse(bad).ok());
  // The effective config round-trips.
  StatusOr<config::Config> again = config::ConfigFromJson(config::ConfigToJson(*c));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->server.http.console_sso.client_id, "airlock-console");
}

}  // namespace
}  // namespace airlock::console
