// Token introspection (RFC 7662) of opaque access tokens: the answer's
// checks, the client's cache, rate limit and failure modes against a fake
// endpoint, the authenticator's 200/401/403/503 with it, the real HTTP POST
// against a local server, and the config keys.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "auth/oauth/http_fetch.h"
#include "auth/oauth/introspection.h"
#include "auth/oauth/jwks_cache.h"
#include "auth/oauth/oauth_authenticator.h"
#include "auth/oauth/resource_metadata.h"
#include "cli/serve_oauth.h"
#include "config/config.h"
#include "oauth_test_keys.h"
#include "test_audit_log.h"

namespace airlock::auth::oauth {
namespace {

using nlohmann::json;
using testing::TestKey;

constexpr int64_t kNow = 1'800'000'000;
const char kIssuer[] = "https://idp.example.com";
const char kResource[] = "https://airlock.example.com/mcp";
const char kEndpoint[] = "https://idp.example.com/token/introspection";

TokenExpectations Expect() { return {.issuer = kIssuer, .resource = kResource, .clock_skew_s = 60}; }

json Active() {
  return {{"active", true},     {"iss", kIssuer},       {"aud", kResource},   {"exp", kNow + 300},
          {"iat", kNow - 10},   {"client_id", "cli-7"}, {"scope", "mcp:use"}, {"token_type", "Bearer"}};
}

std::string Refusal(const json& answer) {
  StatusOr<TokenClaims> c = ParseIntrospection(answer.dump(), Expect(), kNow);
  return c.ok() ? "ACCEPTED" : c.status().message();
}

TEST(OAuthIntrospection, AnswerChecks) {
  StatusOr<TokenClaims> c = ParseIntrospection(Active().dump(), Expect(), kNow);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->issuer, kIssuer);
  EXPECT_EQ(c->subject, "cli-7");  // no sub: a client credentials token is the client's
  EXPECT_EQ(c->client_id, "cli-7");
  EXPECT_EQ(c->scopes, std::vector<std::string>{"mcp:use"});
  json with_sub = Active();
  with_sub["sub"] = "alice";
  with_sub["aud"] = {"other", kResource};
  with_sub.erase("iss");  // optional in RFC 7662: then the configured issuer
  c = ParseIntrospection(with_sub.dump(), Expect(), kNow);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->subject, "alice");
  EXPECT_EQ(c->issuer, kIssuer);

  EXPECT_EQ(Refusal({{"active", false}}), "token is not active (revoked, expired or unknown)");
  json j = Active();
  j["iss"] = "https://evil.example.com";
  EXPECT_EQ(Refusal(j), std::string("token issuer is not ") + kIssuer);
  j = Active();
  j["aud"] = "https://other.example.com/mcp";
  EXPECT_EQ(Refusal(j), std::string("token audience does not include ") + kResource);
  j.erase("aud");
  EXPECT_EQ(Refusal(j), std::string("token audience does not include ") + kResource);
  j = Active();
  j["exp"] = kNow - 61;
  EXPECT_EQ(Refusal(j), "token expired");
  j = Active();
  j["nbf"] = kNow + 3600;
  EXPECT_EQ(Refusal(j), "token is not yet valid");
  j = Active();
  j["token_type"] = "refresh_token";
  EXPECT_EQ(Refusal(j), "token is not a bearer access token");
  j = Active();
  j.erase("client_id");
  EXPECT_EQ(Refusal(j), "token has no subject");

  // Not an introspection response: the endpoint failed, not the client.
  for (const char* garbage : {"", "<html>502</html>", "[]", R"({"active":"yes"})"}) {
    StatusOr<TokenClaims> g = ParseIntrospection(garbage, Expect(), kNow);
    ASSERT_FALSE(g.ok()) << garbage;
    EXPECT_EQ(g.status().code(), StatusCode::kUnavailable) << garbage;
  }
}

TEST(OAuthIntrospection, ClientSecretBasicFormEncodesThenBase64) {
  EXPECT_EQ(ClientSecretBasic("airlock", "s3cret"), "Basic YWlybG9jazpzM2NyZXQ=");
  EXPECT_EQ(FormEncode("a b:c/d+e"), "a+b%3Ac%2Fd%2Be");
}

// A fake authorization server: answers by token, counts POSTs, can fail.
struct FakeEndpoint {
  std::map<std::string, json> answers;  // token → introspection answer
  std::map<std::string, std::string> docs;
  Status fail = OkStatus();
  int posts = 0;
  std::string last_form, last_authorization, last_url;
  Poster poster() {
    return [this](const std::string& url, const std::string& form, const std::string& auth) -> StatusOr<std::string> {
      ++posts;
      last_url = url;
      last_form = form;
      last_authorization = auth;
      if (!fail.ok()) return fail;
      const std::string prefix = "token=";
      std::string token = form.substr(prefix.size(), form.find('&') - prefix.size());
      auto it = answers.find(token);
      return it == answers.end() ? json{{"active", false}}.dump() : it->second.dump();
    };
  }
  Fetcher getter() {
    return [this](const std::string& url) -> StatusOr<std::string> {
      auto it = docs.find(url);
      if (it == docs.end()) return Unavailable(url + ": HTTP 404");
      return it->second;
    };
  }
};

TokenIntrospector::Options Opts() {
  return {.issuer = kIssuer, .resource = kResource, .endpoint = kEndpoint, .client_id = "airlock",
          .client_secret = "s3cret", .clock_skew_s = 60, .cache_s = 5, .cache_max_entries = 100,
          .max_per_minute = 50};
}

TEST(OAuthIntrospection, PostsWithClientAuthAndCachesWithinCacheSAndExp) {
  FakeEndpoint idp;
  idp.answers["opaque-1"] = Active();
  int64_t t = 1000;
  int64_t wall = kNow;
  TokenIntrospector in(Opts(), idp.getter(), idp.poster(), [&wall] { return wall; }, [&t] { return t; });
  StatusOr<TokenClaims> c = in.Introspect("opaque-1");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(idp.last_url, kEndpoint);
  EXPECT_EQ(idp.last_form, "token=opaque-1&token_type_hint=access_token");
  EXPECT_EQ(idp.last_authorization, "Basic YWlybG9jazpzM2NyZXQ=");
  ASSERT_TRUE(in.Introspect("opaque-1").ok());
  EXPECT_EQ(idp.posts, 1);  // cached

  // Revoked at the provider: still admitted from the cache until cache_s.
  idp.answers.erase("opaque-1");
  t += 4;
  EXPECT_TRUE(in.Introspect("opaque-1").ok());
  t += 1;
  c = in.Introspect("opaque-1");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "token is not active (revoked, expired or unknown)");
  EXPECT_EQ(idp.posts, 2);
  // The refusal is cached too: a revoked token replayed does not re-ask.
  EXPECT_FALSE(in.Introspect("opaque-1").ok());
  EXPECT_EQ(idp.posts, 2);

  // Never cached past the token's exp.
  json short_lived = Active();
  short_lived["exp"] = kNow + 2;
  idp.answers["opaque-2"] = short_lived;
  ASSERT_TRUE(in.Introspect("opaque-2").ok());
  t += 2;
  wall += 2;
  idp.answers.erase("opaque-2");
  EXPECT_FALSE(in.Introspect("opaque-2").ok());
  EXPECT_EQ(idp.posts, 4);
}

TEST(OAuthIntrospection, EndpointFailuresAreUnavailableAndNotCached) {
  FakeEndpoint idp;
  idp.answers["opaque-1"] = Active();
  TokenIntrospector in(Opts(), idp.getter(), idp.poster(), [] { return kNow; }, [] { return int64_t{0}; });
  idp.fail = Unavailable("https://idp/introspect: HTTP 503");
  StatusOr<TokenClaims> c = in.Introspect("opaque-1");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(c.status().message().find("token introspection failed"), std::string::npos) << c.status().message();
  idp.fail = DeadlineExceeded("timeout");
  EXPECT_EQ(in.Introspect("opaque-1").status().code(), StatusCode::kUnavailable);
  idp.fail = OkStatus();
  EXPECT_TRUE(in.Introspect("opaque-1").ok());  // the provider is back: nothing stale was kept
  EXPECT_EQ(idp.posts, 3);
  EXPECT_EQ(in.cached(), 1u);
}

TEST(OAuthIntrospection, AFloodOfGarbageIsCappedPerMinuteAndTheCacheIsBounded) {
  FakeEndpoint idp;
  idp.answers["good"] = Active();
  int64_t t = 0;
  TokenIntrospector::Options o = Opts();
  o.cache_max_entries = 10;
  TokenIntrospector in(o, idp.getter(), idp.poster(), [] { return kNow; }, [&t] { return t; });
  ASSERT_TRUE(in.Introspect("good").ok());
  for (int i = 0; i < 200; ++i) {
    StatusOr<TokenClaims> c = in.Introspect("garbage-" + std::to_string(i));
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), i < 49 ? StatusCode::kInvalidArgument : StatusCode::kUnavailable) << i;
  }
  EXPECT_EQ(idp.posts, 50);  // max_per_minute
  EXPECT_LE(in.cached(), 10u);
  t += 60;
  EXPECT_EQ(in.Introspect("garbage-x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(idp.posts, 51);
}

TEST(OAuthIntrospection, DiscoversTheEndpointAndRefusesAPlainHttpOne) {
  FakeEndpoint idp;
  idp.answers["opaque-1"] = Active();
  idp.docs[OpenIdConfigurationUrl(kIssuer)] =
      json{{"issuer", kIssuer}, {"jwks_uri", "https://idp/jwks"}, {"introspection_endpoint", "https://idp/i"}}.dump();
  TokenIntrospector::Options o = Opts();
  o.endpoint = "";
  TokenIntrospector in(o, idp.getter(), idp.poster(), [] { return kNow; }, [] { return int64_t{0}; });
  ASSERT_TRUE(in.Introspect("opaque-1").ok());
  EXPECT_EQ(idp.last_url, "https://idp/i");

  idp.docs[OpenIdConfigurationUrl(kIssuer)] =
      json{{"issuer", kIssuer}, {"introspection_endpoint", "http://idp.example.com/i"}}.dump();
  TokenIntrospector plain(o, idp.getter(), idp.poster(), [] { return kNow; }, [] { return int64_t{0}; });
  StatusOr<TokenClaims> c = plain.Introspect("opaque-1");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(c.status().message().find("must be https://"), std::string::npos) << c.status().message();
  EXPECT_EQ(idp.posts, 1);  // the secret was not sent there
}

config::OAuthConfig Cfg() {
  config::OAuthConfig c;
  c.issuer = kIssuer;
  c.resource = kResource;
  c.jwks_uri = "https://idp/jwks";
  c.scopes_supported = {"mcp:use"};
  c.role_rules = {{.scope = "mcp:admin", .claim = "", .value = "", .role = "admin"},
                  {.scope = "mcp:use", .claim = "", .value = "", .role = "reader"}};
  c.introspection.client_id = "airlock";
  c.introspection.endpoint = kEndpoint;
  return c;
}

TEST(OAuthIntrospection, AuthenticatorAdmitsOpaqueTokensAndRefuses401Or403Or503) {
  FakeEndpoint idp;
  idp.answers["opaque-reader"] = Active();
  json nobody = Active();
  nobody["scope"] = "other";
  idp.answers["opaque-nobody"] = nobody;
  const TestKey key = TestKey::Rsa("rsa-1");
  idp.docs["https://idp/jwks"] = json{{"keys", {key.PublicJwk()}}}.dump();
  const config::OAuthConfig cfg = Cfg();
  auto make = [&](const config::OAuthConfig& c) {
    return std::make_unique<OAuthAuthenticator>(
        c, idp.getter(), [] { return kNow; }, [] { return int64_t{0}; },
        std::make_unique<TokenIntrospector>(IntrospectionOptions(c, "s3cret"), idp.getter(), idp.poster(),
                                            [] { return kNow; }, [] { return int64_t{0}; }));
  };
  auto auth = make(cfg);

  AuthDecision ok = auth->Authenticate("opaque-reader", "/mcp");
  ASSERT_TRUE(ok.caller) << ok.message;
  EXPECT_EQ(ok.caller->user, "oauth:cli-7@idp.example.com");
  EXPECT_EQ(ok.caller->role, "reader");
  EXPECT_EQ(ok.caller->auth, "oauth");
  EXPECT_EQ(ok.caller->key_id, "cli-7");

  AuthDecision forbidden = auth->Authenticate("opaque-nobody", "/mcp");
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_EQ(forbidden.client_id, "cli-7");

  AuthDecision inactive = auth->Authenticate("revoked-or-garbage", "/mcp");
  EXPECT_EQ(inactive.status, 401);
  EXPECT_EQ(inactive.message, "token is not active (revoked, expired or unknown)");
  EXPECT_NE(inactive.challenge.find("error=\"invalid_token\""), std::string::npos) << inactive.challenge;

  // A JWT is still validated locally, without asking the endpoint.
  const int posts = idp.posts;
  json claims = {{"iss", kIssuer}, {"sub", "bob"}, {"aud", kResource}, {"exp", kNow + 300}, {"scope", "mcp:use"}};
  AuthDecision jwt = auth->Authenticate(key.Sign(claims), "/mcp");
  ASSERT_TRUE(jwt.caller) << jwt.message;
  EXPECT_EQ(idp.posts, posts);

  idp.fail = Unavailable("https://idp/token/introspection: HTTP 500");
  AuthDecision down = auth->Authenticate("opaque-new", "/mcp");
  EXPECT_FALSE(down.caller);
  EXPECT_EQ(down.status, 503);
  EXPECT_NE(down.message.find("cannot check the token now"), std::string::npos) << down.message;
  EXPECT_EQ(down.challenge.find("error="), std::string::npos) << down.challenge;
  idp.fail = OkStatus();

  // all_tokens: JWTs go to the endpoint as well (here: unknown there, so 401).
  config::OAuthConfig all = cfg;
  all.introspection.all_tokens = true;
  auto strict = make(all);
  AuthDecision revoked_jwt = strict->Authenticate(key.Sign(claims), "/mcp");
  EXPECT_EQ(revoked_jwt.status, 401);
  EXPECT_EQ(revoked_jwt.message, "token is not active (revoked, expired or unknown)");

  // Without introspection an opaque token is refused as before.
  config::OAuthConfig off = cfg;
  off.introspection = {};
  OAuthAuthenticator jwt_only(off, idp.getter(), [] { return kNow; }, [] { return int64_t{0}; });
  EXPECT_EQ(jwt_only.Authenticate("opaque-reader", "/mcp").message, "token is not a JWT");
}

// The real POST: form body and Authorization header arrive; failures,
// timeouts and oversized answers are errors.
TEST(OAuthIntrospection, HttpPostFormAgainstALocalServer) {
  httplib::Server server;
  std::string seen_body, seen_auth, seen_type;
  server.Post("/introspect", [&](const httplib::Request& req, httplib::Response& res) {
    seen_body = req.body;
    seen_auth = req.get_header_value("Authorization");
    seen_type = req.get_header_value("Content-Type");
    res.set_content(R"({"active":false})", "application/json");
  });
  server.Post("/broken", [](const httplib::Request&, httplib::Response& res) { res.status = 502; });
  server.Post("/huge", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(200 * 1024, 'x'), "application/json");
  });
  server.Post("/drip", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return sink.write(" ", 1);  // false once the client has gone
    });
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::string base = "http://127.0.0.1:" + std::to_string(port);

  StatusOr<std::string> r = HttpIntrospectionPost(base + "/introspect", "token=abc", "Basic eDp5");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, R"({"active":false})");
  EXPECT_EQ(seen_body, "token=abc");
  EXPECT_EQ(seen_auth, "Basic eDp5");
  EXPECT_EQ(seen_type, "application/x-www-form-urlencoded");
  EXPECT_EQ(HttpIntrospectionPost(base + "/broken", "token=abc", "").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(HttpIntrospectionPost(base + "/huge", "token=abc", "").status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(HttpIntrospectionPost("ftp://x/", "", "").status().code(), StatusCode::kInvalidArgument);
  // A server dripping bytes, each within the read timeout: cut at connect_s + read_s.
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<std::string> drip = HttpPostForm(base + "/drip", "token=abc", "", {.connect_s = 1, .read_s = 1, .max_body = 1 << 20});
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(drip.ok());
  EXPECT_NE(drip.status().message().find("too slow"), std::string::npos) << drip.status().message();
  EXPECT_LT(took, std::chrono::seconds(4));
  server.stop();
  t.join();
}

TEST(OAuthIntrospection, ConfigKeysAndTheClientSecret) {
  json j = {{"server",
             {{"http",
               {{"oauth",
                 {{"issuer", kIssuer},
                  {"resource", kResource},
                  {"introspection",
                   {{"client_id", "airlock"}, {"client_secret_env", "AIRLOCK_TEST_INTROSPECTION_SECRET"},
                    {"cache_s", 2}, {"max_per_minute", 100}}}}}}}}}};
  StatusOr<config::Config> c = config::ConfigFromJson(j);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const config::OAuthIntrospectionConfig& in = c->server.http.oauth.introspection;
  EXPECT_EQ(in.client_id, "airlock");
  EXPECT_EQ(in.cache_s, 2u);
  EXPECT_EQ(in.max_per_minute, 100u);
  EXPECT_EQ(in.cache_max_entries, 4096u);
  EXPECT_FALSE(in.all_tokens);
  EXPECT_FALSE(ReadClientSecret(in).ok());  // not set
  setenv("AIRLOCK_TEST_INTROSPECTION_SECRET", " s3cret\n", 1);
  StatusOr<std::string> secret = ReadClientSecret(in);
  ASSERT_TRUE(secret.ok()) << secret.status().message();
  EXPECT_EQ(*secret, "s3cret");
  unsetenv("AIRLOCK_TEST_INTROSPECTION_SECRET");

  const std::string file = (std::filesystem::temp_directory_path() / "airlock-introspection-secret").string();
  std::ofstream(file) << "from-file\n";
  config::OAuthIntrospectionConfig by_file;
  by_file.client_id = "airlock";
  by_file.client_secret_file = file;
  secret = ReadClientSecret(by_file);
  ASSERT_TRUE(secret.ok()) << secret.status().message();
  EXPECT_EQ(*secret, "from-file");
  std::filesystem::remove(file);

  auto refused = [&](json intro) {
    json k = j;
    k["server"]["http"]["oauth"]["introspection"] = intro;
    return !config::ConfigFromJson(k).ok();
  };
  EXPECT_TRUE(refused({{"client_id", "airlock"}}));  // no secret
  EXPECT_TRUE(refused({{"client_id", "airlock"}, {"client_secret_env", "A"}, {"client_secret_file", "/f"}}));
  EXPECT_TRUE(refused({{"client_secret_env", "A"}}));  // no client_id
  EXPECT_TRUE(refused({{"client_id", "airlock"}, {"client_secret_env", "A"}, {"cache_s", 301}}));
  EXPECT_TRUE(refused({{"client_id", "airlock"}, {"client_secret_env", "A"}, {"bogus", 1}}));
  json no_issuer = {{"server", {{"http", {{"oauth", {{"introspection", {{"client_id", "a"}, {"client_secret_env", "A"}}}}}}}}}};
  EXPECT_FALSE(config::ConfigFromJson(no_issuer).ok());

  config::OAuthConfig plain = Cfg();
  plain.introspection.endpoint = "http://idp.example.com/introspect";
  EXPECT_FALSE(CheckOAuthConfig(plain, true).ok());
  plain.introspection.endpoint = "http://127.0.0.1:9/introspect";
  EXPECT_TRUE(CheckOAuthConfig(plain, true).ok());
}

// serve's wiring: the secret read at start (a missing one fails it), an
// endpoint that cannot be reached gives 503 "Service Unavailable", audited
// without the token.
TEST(OAuthIntrospection, ServeInstallsItAndAnUnreachableEndpointIs503Audited) {
  const std::string file = (std::filesystem::temp_directory_path() / "airlock-introspection-serve-secret").string();
  config::Config cfg = config::DefaultConfig();
  config::OAuthConfig& oc = cfg.server.http.oauth;
  oc.issuer = "http://127.0.0.1:1";
  oc.resource = "http://127.0.0.1:8787/mcp";
  oc.jwks_uri = "http://127.0.0.1:1/jwks";
  oc.role_rules = {{.scope = "mcp:use", .claim = "", .value = "", .role = "reader"}};
  oc.introspection.client_id = "airlock";
  oc.introspection.client_secret_file = file;
  oc.introspection.endpoint = "http://127.0.0.1:1/introspect";  // nothing listens on port 1
  mcp::HttpOptions http;
  http.host = "127.0.0.1";
  tests::TempAuditLog audit("introspection_serve");
  ASSERT_NE(audit.get(), nullptr);
  EXPECT_FALSE(cli::InstallOAuth(cfg, &http, audit.get()).ok());  // no secret file yet

  std::ofstream(file) << "s3cret\n";
  auto installed = cli::InstallOAuth(cfg, &http, audit.get());
  std::filesystem::remove(file);
  ASSERT_TRUE(installed.ok()) << installed.status().message();
  ASSERT_NE((*installed)->introspector(), nullptr);
  const std::string token = "opaque-token-that-must-not-be-logged";
  mcp::AuthOutcome out = http.oauth(token, "/mcp");
  EXPECT_FALSE(out.caller);
  EXPECT_EQ(out.status, 503);
  EXPECT_EQ(out.message.rfind("Service Unavailable: cannot check the token now: token introspection failed", 0), 0u)
      << out.message;
  auto rows = audit.get()->store()->Query({});
  ASSERT_TRUE(rows.ok());
  bool refused = false;
  for (const audit::AuditRow& r : *rows) {
    if (r.event() == nullptr) continue;
    EXPECT_EQ(r.event()->detail.dump().find(token), std::string::npos);
    refused = refused || (r.event()->kind == "auth_refused" && r.event()->detail.value("status", 0) == 503);
  }
  EXPECT_TRUE(refused);
}

}  // namespace
}  // namespace airlock::auth::oauth
