// The HTTP transport as an OAuth 2.1 resource server: Protected Resource
// Metadata at the well-known paths, 401/403 with Bearer challenges, OAuth
// tokens beside API keys. Real transport on 127.0.0.1, real validator, keys
// made in-test, the JWKS served by a fake fetcher.
#include <gtest/gtest.h>
#include <httplib.h>

#include "auth/oauth/oauth_authenticator.h"
#include "auth/oauth/resource_metadata.h"
#include "mcp/http_transport.h"
#include "mcp_http_test_util.h"
#include "mcp_test_util.h"
#include "oauth_test_keys.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using auth::oauth::testing::TestKey;

const httplib::Headers kAccept = {{"Accept", "application/json, text/event-stream"}};

class McpHttpOAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_.issuer = "http://127.0.0.1:1/issuer";
    cfg_.resource = "http://127.0.0.1:8787/mcp";
    cfg_.jwks_uri = "http://127.0.0.1:1/jwks";
    cfg_.scopes_supported = {"mcp"};
    cfg_.role_rules = {{.scope = "mcp", .role = "reader"}};
    jwks_ = json{{"keys", {key_.PublicJwk()}}}.dump();
    oauth_ = std::make_unique<auth::oauth::OAuthAuthenticator>(
        cfg_, [this](const std::string& url) -> StatusOr<std::string> {
          if (url == cfg_.jwks_uri) return jwks_;
          return Unavailable("404");
        });
    HttpOptions o;
    o.authenticate = [](std::string_view token) -> std::optional<governance::Caller> {
      if (token == "alk_good") return governance::Caller{.user = "alice", .role = "reader", .auth = "api_key"};
      return std::nullopt;
    };
    o.oauth_metadata = auth::oauth::ProtectedResourceMetadata(cfg_).dump();
    o.oauth_challenge = [this](const std::string& path) { return oauth_->Challenge(path); };
    o.oauth = [this](std::string_view token, const std::string& path) {
      auth::oauth::AuthDecision d = oauth_->Authenticate(token, path);
      return AuthOutcome{.caller = d.caller, .status = d.status, .challenge = d.challenge, .message = d.message};
    };
    server_ = std::make_unique<McpServer>(config::DefaultConfig(), executor_);
    ASSERT_TRUE(testing::StartTestHttpFront(*server_, std::move(o), &http_, &client_).ok());
  }
  void TearDown() override { http_->Stop(); }

  json Claims() const {
    const int64_t now = time(nullptr);
    return {{"iss", cfg_.issuer}, {"sub", "bob"}, {"aud", cfg_.resource}, {"exp", now + 300},
            {"iat", now}, {"scope", "mcp"}, {"client_id", "cli"}};
  }
  httplib::Result Initialize(const std::string& token) {
    httplib::Headers h = kAccept;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return client_->Post("/mcp", h, testing::InitializeRequest(1).dump(), "application/json");
  }

  config::OAuthConfig cfg_;
  TestKey key_ = TestKey::Ec("k1");
  std::string jwks_;
  std::unique_ptr<auth::oauth::OAuthAuthenticator> oauth_;
  testing::FakeExecutor executor_;
  std::unique_ptr<McpServer> server_;
  std::unique_ptr<HttpTransport> http_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(McpHttpOAuthTest, ServesProtectedResourceMetadataAtBothWellKnownPaths) {
  for (const char* path : {"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"}) {
    auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path;
    json m = json::parse(res->body);
    EXPECT_EQ(m["resource"], cfg_.resource);
    EXPECT_EQ(m["authorization_servers"], json({cfg_.issuer}));
    EXPECT_EQ(m["scopes_supported"], json({"mcp"}));
    EXPECT_EQ(m["bearer_methods_supported"], json({"header"}));
  }
  auto other = client_->Get("/.well-known/oauth-protected-resource/nope");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
}

TEST_F(McpHttpOAuthTest, NoTokenGets401NamingTheMetadata) {
  auto res = Initialize("");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"),
            "Bearer resource_metadata=\"http://127.0.0.1:8787/.well-known/oauth-protected-resource/mcp\", "
            "scope=\"mcp\"");
}

TEST_F(McpHttpOAuthTest, ValidTokenOpensASessionAndBadOnesAreRefused) {
  auto ok = Initialize(key_.Sign(Claims(), "ES256"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_FALSE(ok->get_header_value("Mcp-Session-Id").empty());

  json expired = Claims();
  expired["exp"] = time(nullptr) - 3600;
  auto bad = Initialize(key_.Sign(expired, "ES256"));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 401);
  EXPECT_NE(bad->get_header_value("WWW-Authenticate").find("error=\"invalid_token\""), std::string::npos);
  EXPECT_NE(bad->body.find("token expired"), std::string::npos) << bad->body;

  json unscoped = Claims();
  unscoped["scope"] = "openid";
  auto forbidden = Initialize(key_.Sign(unscoped, "ES256"));
  ASSERT_TRUE(forbidden);
  EXPECT_EQ(forbidden->status, 403);
  EXPECT_NE(forbidden->get_header_value("WWW-Authenticate").find("error=\"insufficient_scope\""), std::string::npos);

  auto garbage = Initialize("not-a-token");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, 401);
}

TEST_F(McpHttpOAuthTest, ApiKeysStillWorkBesideOAuth) {
  auto res = Initialize("alk_good");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

TEST_F(McpHttpOAuthTest, ASessionOpenedWithATokenRefusesAnotherSubject) {
  auto ok = Initialize(key_.Sign(Claims(), "ES256"));
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 200);
  json other = Claims();
  other["sub"] = "mallory";
  httplib::Headers h = kAccept;
  h.emplace("Authorization", "Bearer " + key_.Sign(other, "ES256"));
  h.emplace("Mcp-Session-Id", ok->get_header_value("Mcp-Session-Id"));
  h.emplace("MCP-Protocol-Version", "2025-11-25");
  auto res = client_->Post("/mcp", h, json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}.dump(),
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
}

}  // namespace
}  // namespace airlock::mcp
