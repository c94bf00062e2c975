// The OAuth resource server's core with keys made in-test: the JWT
// validator's bad-token matrix, the JWKS cache (rotation, rate limit),
// role rules, metadata and challenges, and the config checks.
#include <gtest/gtest.h>

#include <atomic>
#include <map>

#include "auth/oauth/jwks_cache.h"
#include "auth/oauth/jwt_validator.h"
#include "auth/oauth/oauth_authenticator.h"
#include "auth/oauth/resource_metadata.h"
#include "auth/oauth/role_mapping.h"
#include "oauth_test_keys.h"

namespace airlock::auth::oauth {
namespace {

using nlohmann::json;
using testing::B64Url;
using testing::SignHs256;
using testing::TestKey;

constexpr int64_t kNow = 1'800'000'000;
const char kIssuer[] = "https://idp.example.com/realms/acme";
const char kResource[] = "https://airlock.example.com/mcp";

const TestKey& Rsa() {
  static const TestKey k = TestKey::Rsa("rsa-1");
  return k;
}
const TestKey& Ec() {
  static const TestKey k = TestKey::Ec("ec-1");
  return k;
}

json Claims() {
  return {{"iss", kIssuer}, {"sub", "user-42"}, {"aud", kResource}, {"exp", kNow + 300},
          {"iat", kNow - 10}, {"nbf", kNow - 10}, {"scope", "mcp:use openid"}, {"client_id", "cli-7"}};
}

std::string JwksOf(std::initializer_list<const TestKey*> keys) {
  json set = {{"keys", json::array()}};
  for (const TestKey* k : keys) set["keys"].push_back(k->PublicJwk());
  return set.dump();
}

JwkSet Keys() {
  StatusOr<JwkSet> s = JwkSet::Parse(JwksOf({&Rsa(), &Ec()}));
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

TokenExpectations Expect() { return {.issuer = kIssuer, .resource = kResource, .clock_skew_s = 60, .max_token_bytes = 8192}; }

StatusOr<TokenClaims> Validate(const std::string& token) { return ValidateJwt(token, Keys(), Expect(), kNow); }

std::string Refusal(const std::string& token) {
  StatusOr<TokenClaims> c = Validate(token);
  return c.ok() ? "ACCEPTED" : c.status().message();
}

TEST(OAuthJwt, ValidRsaAndEcTokensAreAccepted) {
  StatusOr<TokenClaims> c = Validate(Rsa().Sign(Claims()));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->subject, "user-42");
  EXPECT_EQ(c->issuer, kIssuer);
  EXPECT_EQ(c->client_id, "cli-7");
  EXPECT_EQ(c->scopes, (std::vector<std::string>{"mcp:use", "openid"}));
  ASSERT_TRUE(Validate(Rsa().Sign(Claims(), "PS256")).ok());
  ASSERT_TRUE(Validate(Ec().Sign(Claims(), "ES256")).ok());
  json aud_list = Claims();
  aud_list["aud"] = {"other", kResource};
  EXPECT_TRUE(Validate(Rsa().Sign(aud_list)).ok());
}

TEST(OAuthJwt, ClockSkewIsAllowedButNoMore) {
  json c = Claims();
  c["exp"] = kNow - 30;  // within 60 s of skew
  EXPECT_TRUE(Validate(Rsa().Sign(c)).ok());
  c["exp"] = kNow - 61;
  EXPECT_EQ(Refusal(Rsa().Sign(c)), "token expired");
}

TEST(OAuthJwt, BadTokenMatrix) {
  json expired = Claims();
  expired["exp"] = kNow - 3600;
  EXPECT_EQ(Refusal(Rsa().Sign(expired)), "token expired");

  json early = Claims();
  early["nbf"] = kNow + 3600;
  EXPECT_EQ(Refusal(Rsa().Sign(early)), "token is not yet valid");

  json future = Claims();
  future["iat"] = kNow + 3600;
  EXPECT_EQ(Refusal(Rsa().Sign(future)), "token was issued in the future");

  json no_exp = Claims();
  no_exp.erase("exp");
  EXPECT_EQ(Refusal(Rsa().Sign(no_exp)), "token has no \"exp\" claim");

  json wrong_aud = Claims();
  wrong_aud["aud"] = "https://other.example.com/mcp";
  EXPECT_EQ(Refusal(Rsa().Sign(wrong_aud)), std::string("token audience does not include ") + kResource);

  json no_aud = Claims();
  no_aud.erase("aud");
  EXPECT_NE(Refusal(Rsa().Sign(no_aud)).find("audience"), std::string::npos);

  json wrong_iss = Claims();
  wrong_iss["iss"] = "https://idp.example.com/realms/acme/";  // exact match only
  EXPECT_EQ(Refusal(Rsa().Sign(wrong_iss)), std::string("token issuer is not ") + kIssuer);

  json no_sub = Claims();
  no_sub.erase("sub");
  EXPECT_EQ(Refusal(Rsa().Sign(no_sub)), "token has no subject");

  // Signed by a key the issuer never published, under a known kid.
  const TestKey stranger = TestKey::Rsa("rsa-1");
  EXPECT_EQ(Refusal(stranger.Sign(Claims())), "token signature is invalid");

  // An unknown kid is NotFound: the caller refreshes the JWKS.
  StatusOr<TokenClaims> unknown = Validate(Rsa().Sign(Claims(), "RS256", "rsa-9"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);

  // alg none: header {"alg":"none"}, empty signature.
  const std::string none = B64Url(json{{"alg", "none"}, {"kid", "rsa-1"}}.dump()) + "." + B64Url(Claims().dump()) + ".";
  EXPECT_EQ(Refusal(none), "token algorithm \"none\" is not accepted");
  const std::string none_sig = B64Url(json{{"alg", "none"}, {"kid", "rsa-1"}}.dump()) + "." + B64Url(Claims().dump()) +
                               "." + B64Url("x");
  EXPECT_EQ(Refusal(none_sig), "token algorithm \"none\" is not accepted");

  // HS256 with the public key (as JWK JSON and as the modulus) as the secret.
  const json hs_header = {{"alg", "HS256"}, {"kid", "rsa-1"}, {"typ", "at+jwt"}};
  EXPECT_EQ(Refusal(SignHs256(hs_header, Claims(), Rsa().PublicJwk().dump())), "token algorithm \"HS256\" is not accepted");
  EXPECT_EQ(Refusal(SignHs256(hs_header, Claims(), Rsa().PublicJwk()["n"].get<std::string>())),
            "token algorithm \"HS256\" is not accepted");

  // An RSA-signed token relabelled as ES256 (the RSA key's kid): no key of
  // that type, so no verification is attempted.
  {
    const std::string rs = Rsa().Sign(Claims());
    const std::string relabelled = B64Url(json{{"alg", "ES256"}, {"kid", "rsa-1"}}.dump()) +
                                   rs.substr(rs.find('.'));
    EXPECT_EQ(Refusal(relabelled), "token signature is invalid");
  }

  // Tampered payload: the signature of the original, another payload.
  const std::string good = Rsa().Sign(Claims());
  json elevated = Claims();
  elevated["scope"] = "mcp:admin";
  const size_t a = good.find('.'), b = good.rfind('.');
  EXPECT_EQ(Refusal(good.substr(0, a + 1) + B64Url(elevated.dump()) + good.substr(b)), "token signature is invalid");

  // Too large, and garbage.
  json big = Claims();
  big["pad"] = std::string(16 * 1024, 'x');
  EXPECT_EQ(Refusal(Rsa().Sign(big)), "token is larger than 8192 bytes");
  EXPECT_EQ(Refusal("garbage"), "token is not a JWT");
  EXPECT_EQ(Refusal("a.b.c"), "token is not a valid JWS");
  EXPECT_EQ(Refusal("..."), "token is not a JWT");
}

TEST(OAuthJwks, SkipsSymmetricAndMalformedKeys) {
  json set = json::parse(JwksOf({&Rsa()}));
  set["keys"].push_back({{"kty", "oct"}, {"kid", "h"}, {"k", "c2VjcmV0"}});
  set["keys"].push_back({{"kty", "RSA"}, {"kid", "bad"}, {"n", "!!"}, {"e", "AQAB"}});
  StatusOr<JwkSet> s = JwkSet::Parse(set.dump());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->size(), 1u);
  EXPECT_FALSE(s->HasKid("h"));
  EXPECT_FALSE(JwkSet::Parse(R"({"keys":[{"kty":"oct","k":"c2VjcmV0"}]})").ok());
  EXPECT_FALSE(JwkSet::Parse("not json").ok());
}

TEST(OAuthJwks, DiscoveryUrls) {
  EXPECT_EQ(AuthorizationServerMetadataUrl("https://h/realms/x"),
            "https://h/.well-known/oauth-authorization-server/realms/x");
  EXPECT_EQ(AuthorizationServerMetadataUrl("https://h"), "https://h/.well-known/oauth-authorization-server");
  EXPECT_EQ(OpenIdConfigurationUrl("https://h/realms/x/"), "https://h/realms/x/.well-known/openid-configuration");
}

// A fake authorization server: discovery documents and a JWKS that tests
// rotate, counting fetches.
struct FakeIdp {
  std::map<std::string, std::string> docs;
  std::atomic<int> gets{0};
  Fetcher fetcher() {
    return [this](const std::string& url) -> StatusOr<std::string> {
      ++gets;
      auto it = docs.find(url);
      if (it == docs.end()) return Unavailable(url + ": HTTP 404");
      return it->second;
    };
  }
};

TEST(OAuthJwks, DiscoversThroughOpenIdConfigurationAndRefreshesOnUnknownKidRateLimited) {
  FakeIdp idp;
  idp.docs[OpenIdConfigurationUrl(kIssuer)] = json{{"issuer", kIssuer}, {"jwks_uri", "https://idp/jwks"}}.dump();
  idp.docs["https://idp/jwks"] = JwksOf({&Rsa()});
  int64_t t = 1000;
  JwksCache cache({.issuer = kIssuer, .jwks_uri = "", .min_refresh_s = 30}, idp.fetcher(), [&t] { return t; });
  StatusOr<std::shared_ptr<const JwkSet>> k = cache.Get("rsa-1");
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(cache.fetches(), 1);
  ASSERT_TRUE(cache.Get("rsa-1").ok());
  EXPECT_EQ(cache.fetches(), 1);  // cached

  // The provider rotates in a new key; a token with its kid refreshes once.
  const TestKey next = TestKey::Rsa("rsa-2");
  idp.docs["https://idp/jwks"] = JwksOf({&Rsa(), &next});
  t += 31;
  k = cache.Get("rsa-2");
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE((*k)->HasKid("rsa-2"));
  EXPECT_EQ(cache.fetches(), 2);

  // A flood of unknown kids: no fetch until min_refresh_s has passed.
  const int before = idp.gets;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(cache.Get("bogus-" + std::to_string(i)).ok());
  EXPECT_EQ(idp.gets, before);
  EXPECT_EQ(cache.fetches(), 2);
  t += 30;
  ASSERT_TRUE(cache.Get("bogus").ok());
  EXPECT_EQ(cache.fetches(), 3);
}

TEST(OAuthJwks, MetadataOfAnotherIssuerIsRefused) {
  FakeIdp idp;
  idp.docs[AuthorizationServerMetadataUrl(kIssuer)] =
      json{{"issuer", "https://evil.example.com"}, {"jwks_uri", "https://evil/jwks"}}.dump();
  idp.docs["https://evil/jwks"] = JwksOf({&Rsa()});
  JwksCache cache({.issuer = kIssuer, .jwks_uri = "", .min_refresh_s = 30}, idp.fetcher(), [] { return int64_t{0}; });
  StatusOr<std::shared_ptr<const JwkSet>> k = cache.Get("rsa-1");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("not metadata of issuer"), std::string::npos) << k.status().message();
}

config::OAuthConfig Cfg() {
  config::OAuthConfig c;
  c.issuer = kIssuer;
  c.resource = kResource;
  c.jwks_uri = "https://idp/jwks";
  c.scopes_supported = {"mcp:use", "mcp:admin"};
  c.role_rules = {{.scope = "mcp:admin", .role = "admin"},
                  {.claim = "groups", .value = "operators", .role = "operator"},
                  {.scope = "mcp:use", .role = "reader"}};
  return c;
}

TEST(OAuthRoles, FirstMatchingRuleWinsAndNoneMeansNoRole) {
  TokenClaims t;
  t.scopes = {"mcp:use"};
  t.claims = {{"groups", {"staff", "operators"}}};
  EXPECT_EQ(MapRole(Cfg().role_rules, t), "operator");
  t.scopes = {"mcp:admin", "mcp:use"};
  EXPECT_EQ(MapRole(Cfg().role_rules, t), "admin");
  t.claims = json::object();
  t.scopes = {"mcp:use"};
  EXPECT_EQ(MapRole(Cfg().role_rules, t), "reader");
  t.scopes = {"openid"};
  EXPECT_EQ(MapRole(Cfg().role_rules, t), std::nullopt);
  t.issuer = "https://idp.example.com:8443/realms/acme";
  t.subject = "a b/c";
  EXPECT_EQ(OAuthUser(t), "oauth:a_b_c@idp.example.com_8443");  // host and port
}

TEST(OAuthAuthenticator, DecidesCallerOr401Or403WithChallenges) {
  FakeIdp idp;
  idp.docs["https://idp/jwks"] = JwksOf({&Rsa()});
  config::OAuthConfig cfg = Cfg();
  OAuthAuthenticator auth(cfg, idp.fetcher(), [] { return kNow; }, [] { return int64_t{0}; });

  AuthDecision ok = auth.Authenticate(Rsa().Sign(Claims()), "/mcp");
  ASSERT_TRUE(ok.caller) << ok.message;
  EXPECT_EQ(ok.caller->user, "oauth:user-42@idp.example.com");
  EXPECT_EQ(ok.caller->role, "reader");
  EXPECT_EQ(ok.caller->auth, "oauth");
  EXPECT_EQ(ok.caller->key_id, "cli-7");

  json no_rule = Claims();
  no_rule["scope"] = "openid";
  AuthDecision forbidden = auth.Authenticate(Rsa().Sign(no_rule), "/mcp");
  EXPECT_FALSE(forbidden.caller);
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_EQ(forbidden.client_id, "cli-7");
  EXPECT_NE(forbidden.challenge.find("error=\"insufficient_scope\""), std::string::npos) << forbidden.challenge;

  json expired = Claims();
  expired["exp"] = kNow - 3600;
  AuthDecision denied = auth.Authenticate(Rsa().Sign(expired), "/mcp");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.challenge,
            "Bearer resource_metadata=\"https://airlock.example.com/.well-known/oauth-protected-resource/mcp\", "
            "scope=\"mcp:use mcp:admin\", error=\"invalid_token\", error_description=\"token expired\"");
  EXPECT_EQ(auth.Challenge("/mcp"),
            "Bearer resource_metadata=\"https://airlock.example.com/.well-known/oauth-protected-resource/mcp\", "
            "scope=\"mcp:use mcp:admin\"");

  config::OAuthConfig scoped = Cfg();
  scoped.required_scope = "mcp:admin";
  OAuthAuthenticator strict(scoped, idp.fetcher(), [] { return kNow; }, [] { return int64_t{0}; });
  AuthDecision step_up = strict.Authenticate(Rsa().Sign(Claims()), "/mcp");
  EXPECT_EQ(step_up.status, 403);
  EXPECT_NE(step_up.challenge.find("scope=\"mcp:admin\""), std::string::npos) << step_up.challenge;

  // The key set cannot be fetched: 401, not a crash or a pass.
  FakeIdp down;
  OAuthAuthenticator unreachable(cfg, down.fetcher(), [] { return kNow; }, [] { return int64_t{0}; });
  AuthDecision d = unreachable.Authenticate(Rsa().Sign(Claims()), "/mcp");
  EXPECT_FALSE(d.caller);
  EXPECT_EQ(d.status, 401);
}

TEST(OAuthMetadata, DocumentPathsAndConfigChecks) {
  json m = ProtectedResourceMetadata(Cfg());
  EXPECT_EQ(m["resource"], kResource);
  EXPECT_EQ(m["authorization_servers"], json({kIssuer}));
  EXPECT_EQ(m["scopes_supported"], json({"mcp:use", "mcp:admin"}));
  EXPECT_EQ(m["bearer_methods_supported"], json({"header"}));
  EXPECT_EQ(MetadataPaths({"/mcp", "/team"}),
            (std::vector<std::string>{"/.well-known/oauth-protected-resource",
                                      "/.well-known/oauth-protected-resource/mcp",
                                      "/.well-known/oauth-protected-resource/team"}));
  EXPECT_EQ(MetadataUrl("http://127.0.0.1:8787", "/mcp"), "http://127.0.0.1:8787/.well-known/oauth-protected-resource/mcp");

  EXPECT_TRUE(CheckOAuthConfig(Cfg(), /*listener_is_loopback=*/true).ok());
  EXPECT_FALSE(CheckOAuthConfig(Cfg(), /*listener_is_loopback=*/false).ok());  // plain HTTP on the network
  config::OAuthConfig proxied = Cfg();
  proxied.behind_tls_proxy = true;
  EXPECT_TRUE(CheckOAuthConfig(proxied, false).ok());
  config::OAuthConfig plain = Cfg();
  plain.resource = "http://airlock.example.com/mcp";
  EXPECT_FALSE(CheckOAuthConfig(plain, true).ok());
  plain.resource = "http://127.0.0.1:8787/mcp";
  EXPECT_TRUE(CheckOAuthConfig(plain, true).ok());
  config::OAuthConfig http_issuer = Cfg();
  http_issuer.issuer = "http://idp.example.com";
  EXPECT_FALSE(CheckOAuthConfig(http_issuer, true).ok());
}

}  // namespace
}  // namespace airlock::auth::oauth
