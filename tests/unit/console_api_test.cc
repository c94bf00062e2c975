// The console's API (console/console_http.h) over real HTTP with the real
// stores: code tools reviewed through the CLI's rules (no self-approval,
// every attempt audited, the diff against the superseded version), keys
// created (the secret once) and revoked (refused on the next request, the
// key's console sign-ins ended), audit filters, a run page with its calls,
// verify, the health panels, and the compiled-in page itself.
#include <gtest/gtest.h>

#include <httplib.h>
#include <unistd.h>

#include <filesystem>

#include "audit/audit_json.h"
#include "audit/audit_log.h"
#include "auth/key_store.h"
#include "codetools/code_tool_store.h"
#include "console/console_http.h"
#include "cli_run_util.h"
#include "console/static_assets.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp_test_util.h"
#include "test_audit_log.h"

namespace airlock::console {
namespace {

namespace fs = std::filesystem;
using codetools::CodeTool;
using codetools::Proposal;
using nlohmann::json;

Proposal Sample(const std::string& name, const std::string& code) {
  Proposal p;
  p.name = name;
  p.description = "Searches the CRM.";
  p.language = "javascript";
  p.code = code;
  p.connectors = {"crm"};
  p.tools = {"crm.search"};
  return p;
}

class ConsoleApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("airlock_console_api_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    ASSERT_NE(audit_.get(), nullptr);
    auto policy = governance::Policy::FromJson(json{{"analyst", {{"inline", true}}}}, nullptr, nullptr);
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    policy_ = std::make_unique<governance::Policy>(std::move(policy).value());
    auto store = codetools::OpenSqliteCodeToolStore((dir_ / "codetools.db").string());
    ASSERT_TRUE(store.ok());
    tools_ = std::move(store).value();
    auto keys = auth::KeyStore::Open((dir_ / "keys.json").string());
    ASSERT_TRUE(keys.ok());
    keys_ = std::move(keys).value();
    alice_ = keys_->Create("alice", "admin", "laptop")->secret;
    auto dave = keys_->Create("dave", "admin", "ops");
    dave_ = dave->secret;
    dave_id_ = dave->info.id;
    bob_ = keys_->Create("bob", "analyst", "")->secret;

    server_ = std::make_unique<mcp::McpServer>(config::DefaultConfig(), executor_, nullptr,
                                               mcp::ServerOptions{.runs = &runs_});
    auto authenticate = [k = keys_.get()](std::string_view token) -> std::optional<governance::Caller> {
      auto id = k->Authenticate(std::string(token));
      if (!id) return std::nullopt;
      return governance::Caller{.user = id->user, .role = id->role, .auth = "api_key", .key_id = id->key_id};
    };
    console_ = std::make_unique<ConsoleHttp>(ConsoleDeps{
        .authenticate = authenticate,
        .key_active = [k = keys_.get()](std::string_view id) { return k->IsActive(std::string(id)); },
        .policy = policy_.get(),
        .runs = &runs_,
        .audit = audit_.get(),
        .code_tools = tools_.get(),
        .keys = keys_.get(),
        .runner_health = [] { return json{{"up", true}, {"pool", {{"ready", 3}}}}; },
        .connector_health = [] { return json::array({{{"name", "crm"}, {"connected", false}}}); },
        .session_stats = [] { return json{{"open", 2}}; }});
    mcp::HttpOptions h;
    h.host = "127.0.0.1";
    h.port = 0;
    h.authenticate = authenticate;
    h.console = [this](const httplib::Request& req, httplib::Response& res) { console_->Handle(req, res); };
    http_ = std::make_unique<mcp::HttpTransport>(*server_, h);
    ASSERT_TRUE(http_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", http_->port());
    client_->set_read_timeout(10);
  }
  void TearDown() override {
    if (http_) http_->Stop();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  struct Signed {
    httplib::Headers headers;  // Cookie and X-CSRF-Token
  };
  Signed SignIn(const std::string& key) {
    auto res = client_->Post("/console/api/signin", {{"Authorization", "Bearer " + key}}, "", "text/plain");
    EXPECT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    const std::string set = res->get_header_value("Set-Cookie");
    return {{{"Cookie", set.substr(0, set.find(';'))}, {"X-CSRF-Token", json::parse(res->body)["csrf"].get<std::string>()}}};
  }
  // {status, body as JSON (null if none)}.
  std::pair<int, json> Get(const Signed& s, const std::string& path) {
    auto res = client_->Get(path, s.headers);
    if (!res) return {0, nullptr};
    return {res->status, json::parse(res->body, nullptr, false)};
  }
  std::pair<int, json> Post(const Signed& s, const std::string& path, const json& body) {
    auto res = client_->Post(path, s.headers, body.dump(), "application/json");
    if (!res) return {0, nullptr};
    return {res->status, json::parse(res->body, nullptr, false)};
  }
  std::vector<audit::EventRow> Events(const std::string& kind) {
    std::vector<audit::EventRow> out;
    auto rows = audit_.get()->store()->Query({});
    EXPECT_TRUE(rows.ok());
    if (!rows.ok()) return out;
    for (const audit::AuditRow& r : *rows) {
      if (r.event() != nullptr && r.event()->kind == kind) out.push_back(*r.event());
    }
    return out;
  }

  fs::path dir_;
  tests::TempAuditLog audit_{"console_api_test"};
  std::unique_ptr<governance::Policy> policy_;
  std::unique_ptr<codetools::CodeToolStore> tools_;
  std::unique_ptr<auth::KeyStore> keys_;
  std::string alice_, dave_, dave_id_, bob_;
  mcp::testing::FakeExecutor executor_;
  mcp::RunTracker runs_;
  std::unique_ptr<mcp::McpServer> server_;
  std::unique_ptr<ConsoleHttp> console_;
  std::unique_ptr<mcp::HttpTransport> http_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ConsoleApiTest, ApproveRejectRevokeFollowTheCliRules) {
  CodeTool v1 = *tools_->Propose(Sample("find_customer", "return 1;\n"), "bob", "default");
  CodeTool own = *tools_->Propose(Sample("alice_tool", "return 2;\n"), "alice", "default");
  const Signed alice = SignIn(alice_);

  auto [list_status, list] = Get(alice, "/console/api/tools?state=proposed");
  ASSERT_EQ(list_status, 200);
  ASSERT_EQ(list["tools"].size(), 2u);
  EXPECT_FALSE(list["tools"][0].contains("code")) << "lists leave the code out";
  EXPECT_EQ(Get(alice, "/console/api/tools?state=bogus").first, 400);

  // Self-approval: refused and on record, through the same rules as the CLI.
  auto [self_status, self] = Post(alice, "/console/api/tools/" + own.id + "/approve", json::object());
  EXPECT_EQ(self_status, 403) << self.dump();
  EXPECT_NE(self["error"].get<std::string>().find("may not approve"), std::string::npos);
  // Approve bob's with allow-write and a definer role.
  auto [ok_status, ok] = Post(alice, "/console/api/tools/" + v1.id + "/approve",
                              {{"allow_write", true}, {"definer_role", "analyst"}, {"reason", "reviewed"}});
  ASSERT_EQ(ok_status, 200) << ok.dump();
  EXPECT_EQ(ok["tool"]["state"], "approved");
  EXPECT_EQ(ok["tool"]["approval"]["allow_write"], true);
  EXPECT_EQ(ok["tool"]["approval"]["definer_role"], "analyst");
  EXPECT_EQ(Post(alice, "/console/api/tools/" + v1.id + "/approve", json::object()).first, 409) << "not proposed any more";
  EXPECT_EQ(Post(alice, "/console/api/tools/ct_nope/approve", json::object()).first, 404);
  EXPECT_EQ(Post(alice, "/console/api/tools/" + own.id + "/approve", {{"definer_role", "ghost"}}).first, 403)
      << "own proposal is checked first";

  // Version 2: the detail shows its code and the diff against version 1.
  CodeTool v2 = *tools_->Propose(Sample("find_customer", "return 42;\n"), "bob", "default");
  auto [detail_status, detail] = Get(alice, "/console/api/tools/" + v2.id);
  ASSERT_EQ(detail_status, 200);
  EXPECT_EQ(detail["tool"]["code"], "return 42;\n");
  EXPECT_EQ(detail["supersedes"]["id"], v1.id);
  EXPECT_NE(detail["diff"].get<std::string>().find("+return 42;"), std::string::npos) << detail["diff"];
  EXPECT_NE(detail["diff"].get<std::string>().find("-return 1;"), std::string::npos);

  // Reject needs a reason; then it is rejected.
  EXPECT_EQ(Post(alice, "/console/api/tools/" + v2.id + "/reject", json::object()).first, 400);
  EXPECT_EQ(Post(alice, "/console/api/tools/" + v2.id + "/reject", {{"reason", 7}}).first, 400);
  auto [rej_status, rej] = Post(alice, "/console/api/tools/" + v2.id + "/reject", {{"reason", "not needed"}});
  EXPECT_EQ(rej_status, 200) << rej.dump();
  EXPECT_EQ(tools_->Get(v2.id)->state, codetools::State::kRejected);
  // Revoke the approved one.
  EXPECT_EQ(Post(alice, "/console/api/tools/" + v1.id + "/revoke", {{"reason", "retired"}}).first, 200);
  EXPECT_EQ(tools_->Get(v1.id)->state, codetools::State::kRevoked);

  // Every attempt is on record, with who and through what.
  std::vector<audit::EventRow> approvals = Events("code_tool_approve");
  ASSERT_GE(approvals.size(), 4u);
  EXPECT_EQ(approvals[0].detail["decision"], "denied");
  EXPECT_EQ(approvals[1].detail["decision"], "allowed");
  EXPECT_EQ(approvals[1].actor, "alice");
  EXPECT_EQ(approvals[1].detail["via"], "console");
  EXPECT_EQ(Events("code_tool_reject").back().detail["decision"], "allowed");
  EXPECT_EQ(Events("code_tool_revoke").size(), 1u);
}

TEST_F(ConsoleApiTest, KeysAreCreatedOnceAndRevokedForTheNextRequest) {
  const Signed alice = SignIn(alice_);
  const Signed dave = SignIn(dave_);
  auto [create_status, created] = Post(alice, "/console/api/keys", {{"user", "erin"}, {"role", "analyst"}, {"name", "ci"}});
  ASSERT_EQ(create_status, 200) << created.dump();
  const std::string secret = created["secret"];
  EXPECT_EQ(secret.rfind("alk_", 0), 0u);
  EXPECT_TRUE(keys_->Authenticate(secret).has_value());
  EXPECT_EQ(Post(alice, "/console/api/keys", {{"user", "erin"}, {"role", "ghost"}}).first, 400) << "no such role";
  EXPECT_EQ(Post(alice, "/console/api/keys", {{"user", "e rin"}, {"role", "analyst"}}).first, 400);

  auto [list_status, list] = Get(alice, "/console/api/keys");
  ASSERT_EQ(list_status, 200);
  EXPECT_EQ(list["keys"].size(), 4u);
  EXPECT_EQ(list.dump().find(secret), std::string::npos) << "a secret is shown once, never listed";
  auto rows = audit_.get()->store()->Query({});
  ASSERT_TRUE(rows.ok());
  for (const audit::AuditRow& r : *rows) {
    EXPECT_EQ(audit::RowJson(r).dump().find(secret), std::string::npos) << "nor recorded";
  }

  // alice revokes dave's key: his console sign-in ends on his next request,
  // and so does the key everywhere else.
  EXPECT_EQ(Get(dave, "/console/api/whoami").first, 200);
  auto [rev_status, rev] = Post(alice, "/console/api/keys/" + dave_id_ + "/revoke", json::object());
  ASSERT_EQ(rev_status, 200) << rev.dump();
  EXPECT_GT(rev["key"]["revoked_at"].get<int64_t>(), 0);
  EXPECT_EQ(Get(dave, "/console/api/whoami").first, 401);
  EXPECT_FALSE(keys_->Authenticate(dave_).has_value());
  auto again = client_->Post("/console/api/signin", {{"Authorization", "Bearer " + dave_}}, "", "text/plain");
  EXPECT_EQ(again->status, 401);
  EXPECT_EQ(Post(alice, "/console/api/keys/k_nope/revoke", json::object()).first, 404);
  ASSERT_EQ(Events("key_revoke").size(), 1u);
  EXPECT_EQ(Events("key_revoke")[0].actor, "alice");
  EXPECT_EQ(Events("key_revoke")[0].detail["via"], "console");
  EXPECT_EQ(Events("key_create").size(), 1u);

  // A key revoked elsewhere (the CLI, another gateway) ends its sign-ins too.
  const Signed alice2 = SignIn(alice_);
  auto list_keys = keys_->List();
  for (const auth::KeyInfo& k : *list_keys) {
    if (k.user == "alice") {
      ASSERT_TRUE(keys_->Revoke(k.id).ok());
    }
  }
  EXPECT_EQ(Get(alice2, "/console/api/keys").first, 401);

  // Not an admin: no sign-in at all.
  EXPECT_EQ(client_->Post("/console/api/signin", {{"Authorization", "Bearer " + bob_}}, "", "text/plain")->status, 403);
}

TEST_F(ConsoleApiTest, AuditFiltersRunPageAndVerify) {
  audit::RunRecord r1;
  r1.run_id = "r_1";
  r1.user = "bob";
  r1.endpoint = "team";
  r1.language = "python";
  r1.code = "print('<script>x</script>')";
  r1.status = "SUCCESS";
  ASSERT_TRUE(audit_.get()->EndRun(r1, {}).ok());
  audit::RunRecord r2 = r1;
  r2.run_id = "r_2";
  r2.user = "carol";
  r2.endpoint = "shelf";
  r2.language = "javascript";
  r2.status = "ERROR";
  r2.calls_total = r2.calls_denied = 1;
  audit::CallRow call;
  call.run_id = "r_2";
  call.seq = 1;
  call.connector = "crm";
  call.tool = "delete";
  call.decision = "denied";
  call.reason = "write tool not allowed";
  call.args_redacted = {{"token", "[REDACTED]"}};
  ASSERT_TRUE(audit_.get()->EndRun(r2, {call}).ok());
  const Signed alice = SignIn(alice_);
  auto ids = [&](const std::string& query) {
    auto [status, body] = Get(alice, "/console/api/audit" + query);
    EXPECT_EQ(status, 200) << query << ": " << body.dump();
    std::vector<std::string> out;
    for (const json& r : body["rows"]) out.push_back(r.value("type", "") + ":" + r.value("run_id", r.value("kind", "")));
    return out;
  };
  EXPECT_EQ(ids("?type=run"), (std::vector<std::string>{"run:r_2", "run:r_1"})) << "newest first";
  EXPECT_EQ(ids("?type=run&user=bob"), (std::vector<std::string>{"run:r_1"}));
  EXPECT_EQ(ids("?language=javascript"), (std::vector<std::string>{"run:r_2", "call:r_2"}));
  EXPECT_EQ(ids("?endpoint=team"), (std::vector<std::string>{"run:r_1"}));
  EXPECT_EQ(ids("?status=ERROR&type=call"), (std::vector<std::string>{"call:r_2"}));
  EXPECT_EQ(ids("?run_id=r_1"), (std::vector<std::string>{"run:r_1"}));
  EXPECT_EQ(ids("?since=2999-01-01"), std::vector<std::string>{});
  EXPECT_EQ(ids("?until=2000-01-01"), std::vector<std::string>{});
  EXPECT_EQ(Get(alice, "/console/api/audit?since=yesterday").first, 400);
  EXPECT_EQ(Get(alice, "/console/api/audit?type=everything").first, 400);
  EXPECT_EQ(Get(alice, "/console/api/audit?limit=0").first, 400);

  auto [run_status, run] = Get(alice, "/console/api/audit/runs/r_2");
  ASSERT_EQ(run_status, 200);
  EXPECT_EQ(run["run"]["status"], "ERROR");
  ASSERT_EQ(run["calls"].size(), 1u);
  EXPECT_EQ(run["calls"][0]["decision"], "denied");
  EXPECT_EQ(run["calls"][0]["args_redacted"]["token"], "[REDACTED]");
  EXPECT_EQ(Get(alice, "/console/api/audit/runs/r_none").first, 404);

  auto [verify_status, verify] = Get(alice, "/console/api/audit/verify");
  ASSERT_EQ(verify_status, 200);
  EXPECT_EQ(verify["ok"], true);
  EXPECT_GT(verify["rows_checked"].get<int64_t>(), 3);
}

TEST_F(ConsoleApiTest, LiveShowsHealthAndWhoAmIListsRoles) {
  const Signed alice = SignIn(alice_);
  auto [status, live] = Get(alice, "/console/api/live");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(live["runner"]["pool"]["ready"], 3);
  EXPECT_EQ(live["connectors"][0]["name"], "crm");
  EXPECT_EQ(live["sessions"]["open"], 2);
  auto [who_status, who] = Get(alice, "/console/api/whoami");
  ASSERT_EQ(who_status, 200);
  EXPECT_NE(std::find(who["roles"].begin(), who["roles"].end(), "analyst"), who["roles"].end());
  EXPECT_EQ(Get(alice, "/console/api/nothing").first, 404);
  auto wrong_method = client_->Post("/console/api/live", alice.headers, "{}", "application/json");
  EXPECT_EQ(wrong_method->status, 404);
}

TEST_F(ConsoleApiTest, ThePageIsCompiledInAndServedUnderThePrefix) {
  ASSERT_TRUE(FindAsset("index.html").has_value());
  ASSERT_TRUE(FindAsset("app.js").has_value());
  auto bare = client_->Get("/console");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 302);
  EXPECT_EQ(bare->get_header_value("Location"), "/console/");
  auto page = client_->Get("/console/");
  ASSERT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("assets/app.js"), std::string::npos);
  EXPECT_EQ(page->body.find("<script>"), std::string::npos) << "no inline script";
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  auto js = client_->Get("/console/assets/app.js");
  ASSERT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  for (const char* bad : {"/console/assets/../index.html", "/console/assets/nope.js", "/console/assets/a/b.js",
                          "/console/index.htm"}) {
    auto res = client_->Get(bad);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404) << bad;
  }
  // Every embedded script is free of HTML sinks (the page renders agent
  // text with textContent only).
  for (const StaticAsset& a : EmbeddedAssets()) {
    if (a.name.size() < 3 || a.name.substr(a.name.size() - 3) != ".js") continue;
    for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("}) {
      EXPECT_EQ(a.content.find(sink), std::string_view::npos) << a.name << " uses " << sink;
    }
  }
}

// `airlock live` is the live page from a shell: the same API, the same rules.
TEST_F(ConsoleApiTest, TheCliSeesAndCancelsWhatTheLivePageDoes) {
  executor_.handler = mcp::testing::FakeExecutor::BlockUntilCancelled;
  auto [session, call] = mcp::testing::StartRunCode(
      *server_, governance::Caller{.user = "carol", .role = "admin", .auth = "api_key"},
      {{"language", "python"}, {"code", "while True: pass"}});
  ASSERT_TRUE(executor_.WaitRunning(1));

  const std::string url = " --url http://127.0.0.1:" + std::to_string(http_->port()) + "/console";
  const std::string bin = std::string(AIRLOCK_BINARY_DIR) + "/airlock live";
  testing::CliOutcome listed = testing::RunCommandLine("AIRLOCK_API_KEY=" + alice_ + " " + bin + url + " --json");
  ASSERT_EQ(listed.rc, 0) << listed.out;
  const json live = listed.result();
  ASSERT_EQ(live["runs"].size(), 1u) << listed.out;
  EXPECT_EQ(live["runs"][0]["user"], "carol");
  EXPECT_EQ(live["runner"]["pool"]["ready"], 3);
  const std::string run_id = live["runs"][0]["run_id"];

  EXPECT_EQ(testing::RunCommandLine("AIRLOCK_API_KEY=" + bob_ + " " + bin + url + " 2>/dev/null").rc, 3)
      << "not an admin key";
  EXPECT_EQ(testing::RunCommandLine("AIRLOCK_API_KEY=" + alice_ + " " + bin + url + " --cancel r_nope 2>/dev/null").rc, 4);
  testing::CliOutcome cancelled =
      testing::RunCommandLine("AIRLOCK_API_KEY=" + alice_ + " " + bin + url + " --cancel " + run_id + " 2>&1");
  EXPECT_EQ(cancelled.rc, 0) << cancelled.out;
  EXPECT_TRUE(executor_.WaitCancelled(1)) << "the CLI's cancel reached the run";
  EXPECT_EQ(Events("console_cancel").size(), 2u);
  EXPECT_EQ(Events("console_cancel").back().actor, "alice");
  session->Close();
}

}  // namespace
}  // namespace airlock::console
