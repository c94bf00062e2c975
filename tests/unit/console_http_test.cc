// The console's first HTTP slice (console/console_http.h) behind the real
// HTTP transport: sign-in only with an admin key, the cookie's attributes,
// the headers every answer carries, CSRF and same-origin on state changes,
// expired and signed-out sessions, the live runs list and an operator's
// cancel reaching a run; every refusal of a state change audited.
#include <gtest/gtest.h>

#include <httplib.h>
#include <unistd.h>

#include <filesystem>

#include "audit/audit_log.h"
#include "audit/sqlite_audit_store.h"
#include "console/console_http.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp_test_util.h"
#include "test_audit_log.h"

namespace airlock::console {
namespace {

using nlohmann::json;
using mcp::testing::FakeExecutor;

class ConsoleHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(audit_.get(), nullptr);
    auto policy = governance::Policy::FromJson(nullptr, nullptr, nullptr);  // built-in reader and admin
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    policy_ = std::make_unique<governance::Policy>(std::move(policy).value());
    server_ = std::make_unique<mcp::McpServer>(config::DefaultConfig(), executor_, nullptr,
                                               mcp::ServerOptions{.runs = &runs_});
    ConsoleSessionOptions o;
    o.now_ms = [this] { return now_ + std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch()).count(); };
    console_ = std::make_unique<ConsoleHttp>(
        ConsoleDeps{.authenticate = [](std::string_view token) -> std::optional<governance::Caller> {
                      if (token == "admin-key") return governance::Caller{.user = "alice", .role = "admin", .auth = "api_key", .key_id = "k_a"};
                      if (token == "reader-key") return governance::Caller{.user = "bob", .role = "reader", .auth = "api_key", .key_id = "k_b"};
                      return std::nullopt;
                    },
                    .policy = policy_.get(), .runs = &runs_, .audit = audit_.get()},
        o);
    mcp::HttpOptions h;
    h.host = "127.0.0.1";
    h.port = 0;
    h.heartbeat_ms = 100;
    h.authenticate = [](std::string_view token) -> std::optional<governance::Caller> {
      if (token == "admin-key") return governance::Caller{.user = "alice", .role = "admin", .auth = "api_key", .key_id = "k_a"};
      return std::nullopt;
    };
    h.console = [this](const httplib::Request& req, httplib::Response& res) { console_->Handle(req, res); };
    http_ = std::make_unique<mcp::HttpTransport>(*server_, h);
    ASSERT_TRUE(http_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", http_->port());
    client_->set_read_timeout(10);
  }
  void TearDown() override {
    if (http_) http_->Stop();
  }
  // Signs in; returns {cookie header value, csrf}.
  std::pair<std::string, std::string> SignIn() {
    auto res = client_->Post("/console/api/signin", {{"Authorization", "Bearer admin-key"}}, "", "text/plain");
    EXPECT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    const std::string set = res->get_header_value("Set-Cookie");
    const std::string cookie = set.substr(0, set.find(';'));
    return {cookie, json::parse(res->body)["csrf"].get<std::string>()};
  }
  std::vector<std::string> Events() { return audit_.EventKinds(); }

  int64_t now_ = 0;
  FakeExecutor executor_;
  mcp::RunTracker runs_;
  tests::TempAuditLog audit_{"console_test"};
  std::unique_ptr<governance::Policy> policy_;
  std::unique_ptr<mcp::McpServer> server_;
  std::unique_ptr<ConsoleHttp> console_;
  std::unique_ptr<mcp::HttpTransport> http_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ConsoleHttpTest, OnlyAnAdminKeySignsIn) {
  auto none = client_->Post("/console/api/signin", "", "text/plain");
  EXPECT_EQ(none->status, 401);
  auto bad = client_->Post("/console/api/signin", {{"Authorization", "Bearer nope"}}, "", "text/plain");
  EXPECT_EQ(bad->status, 401);
  auto reader = client_->Post("/console/api/signin", {{"Authorization", "Bearer reader-key"}}, "", "text/plain");
  EXPECT_EQ(reader->status, 403);
  EXPECT_TRUE(reader->get_header_value("Set-Cookie").empty());
  auto cross = client_->Post("/console/api/signin",
                             {{"Authorization", "Bearer admin-key"}, {"Origin", "http://evil.example"}}, "", "text/plain");
  EXPECT_EQ(cross->status, 403);

  auto ok = client_->Post("/console/api/signin", {{"Authorization", "Bearer admin-key"}}, "", "text/plain");
  ASSERT_EQ(ok->status, 200);
  const std::string cookie = ok->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  EXPECT_NE(cookie.find("Path=/console"), std::string::npos);
  const json me = json::parse(ok->body);
  EXPECT_EQ(me["user"], "alice");
  EXPECT_EQ(me["csrf"].get<std::string>().size(), 32u);
  EXPECT_EQ(cookie.find(me["csrf"].get<std::string>()), std::string::npos);
  const std::vector<std::string> kinds = Events();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "console_signin_denied"), 4);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "console_signin"), 1);
}

TEST_F(ConsoleHttpTest, EveryAnswerCarriesTheSecurityHeaders) {
  std::vector<httplib::Result> answers;
  answers.push_back(client_->Get("/console/api/whoami"));
  answers.push_back(client_->Get("/console/nothing"));
  answers.push_back(client_->Post("/console/api/signin", "", "text/plain"));
  for (const httplib::Result& res : answers) {
    ASSERT_TRUE(res);
    EXPECT_NE(res->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
    EXPECT_EQ(res->get_header_value("Content-Security-Policy").find("unsafe-inline"), std::string::npos);
    EXPECT_EQ(res->get_header_value("X-Frame-Options"), "DENY");
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(res->get_header_value("Cache-Control"), "no-store");
  }
  auto bad_host = client_->Get("/console/api/whoami", {{"Host", "evil.example"}});
  EXPECT_EQ(bad_host->status, 403);
}

TEST_F(ConsoleHttpTest, StateChangesNeedTheCsrfTokenAndTheSameOrigin) {
  auto [cookie, csrf] = SignIn();
  auto who = client_->Get("/console/api/whoami", {{"Cookie", cookie}});
  ASSERT_EQ(who->status, 200);
  EXPECT_EQ(json::parse(who->body)["csrf"], csrf);
  const std::string body = R"({"run_id": "r_nope"})";
  auto no_token = client_->Post("/console/api/live/cancel", {{"Cookie", cookie}}, body, "application/json");
  EXPECT_EQ(no_token->status, 403);
  auto wrong = client_->Post("/console/api/live/cancel", {{"Cookie", cookie}, {"X-CSRF-Token", std::string(32, 'a')}},
                             body, "application/json");
  EXPECT_EQ(wrong->status, 403);
  auto cross = client_->Post("/console/api/live/cancel",
                             {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, {"Origin", "http://evil.example"}}, body,
                             "application/json");
  EXPECT_EQ(cross->status, 403);
  auto site = client_->Post("/console/api/live/cancel",
                            {{"Cookie", cookie}, {"X-CSRF-Token", csrf}, {"Sec-Fetch-Site", "cross-site"}}, body,
                            "application/json");
  EXPECT_EQ(site->status, 403);
  auto good = client_->Post("/console/api/live/cancel", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}, body,
                            "application/json");
  EXPECT_EQ(good->status, 404) << "allowed through, and no such run";
  const std::vector<std::string> kinds = Events();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "console_denied"), 4);

  auto out = client_->Post("/console/api/signout", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}, "", "text/plain");
  EXPECT_EQ(out->status, 204);
  EXPECT_EQ(client_->Get("/console/api/whoami", {{"Cookie", cookie}})->status, 401);
}

TEST_F(ConsoleHttpTest, AnExpiredConsoleSessionIsRefused) {
  auto [cookie, csrf] = SignIn();
  now_ += 16 * 60 * 1000;  // past the 15-minute idle lifetime
  auto res = client_->Get("/console/api/whoami", {{"Cookie", cookie}});
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->get_header_value("Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(client_->Get("/console/api/live")->status, 401) << "no cookie at all";
}

TEST_F(ConsoleHttpTest, TheLivePageListsARunAndCancelsIt) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  auto [session, call] = mcp::testing::StartRunCode(
      *server_, governance::Caller{.user = "carol", .role = "admin", .auth = "api_key"},
      {{"language", "python"}, {"code", "while True: pass"}});
  ASSERT_TRUE(executor_.WaitRunning(1));

  auto [cookie, csrf] = SignIn();
  auto live = client_->Get("/console/api/live", {{"Cookie", cookie}});
  ASSERT_EQ(live->status, 200);
  const json runs = json::parse(live->body)["runs"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["user"], "carol");
  EXPECT_EQ(runs[0]["tool"], "run_code");
  auto cancel = client_->Post("/console/api/live/cancel", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}},
                              json{{"run_id", runs[0]["run_id"]}}.dump(), "application/json");
  EXPECT_EQ(cancel->status, 200) << cancel->body;
  EXPECT_TRUE(executor_.WaitCancelled(1)) << "the operator's cancel reached the run";
  const std::vector<std::string> kinds = Events();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "console_cancel"), 1);
  session->Close();
}

}  // namespace
}  // namespace airlock::console
