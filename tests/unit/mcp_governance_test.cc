// The MCP server under governance without downstream servers: per-caller
// tool lists, forbidden == unknown, and the audit log at the tools/call
// boundary (every call recorded before it runs; fail-closed refuses when the
// log cannot be written, and the executor is never reached).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "audit/audit_log.h"
#include "audit/sqlite_audit_store.h"
#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp_test_util.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::InitializeRequest;
using testing::RecordingChannel;
using testing::Request;
using testing::RunCode;

// A store whose every write fails (a full disk, a lost database server).
class BrokenStore : public audit::AuditStore {
 public:
  Status AppendRun(const audit::RunRecord&) override { return Unavailable("disk full"); }
  Status AppendCall(const audit::CallRow&) override { return Unavailable("disk full"); }
  Status AppendEvent(const audit::EventRow&) override { return Unavailable("disk full"); }
  StatusOr<std::vector<audit::AuditRow>> Query(const audit::AuditQuery&) override { return Unavailable("disk full"); }
  StatusOr<audit::VerifyReport> Verify() override { return Unavailable("disk full"); }
};

config::Config ConfigWithRoles() {
  config::Config c = config::DefaultConfig();
  c.roles = {{"viewer", {{"inline", false}}}, {"runner", json::object()}};
  return c;
}

governance::Caller As(const std::string& user, const std::string& role) {
  return {.user = user, .role = role, .auth = "api_key", .key_id = "k_test"};
}

// One initialized session for `caller`; Send() waits for each reply.
class Client {
 public:
  Client(McpServer& server, governance::Caller caller) : session_(server.NewSession(nullptr, std::move(caller))) {
    EXPECT_TRUE(Send(InitializeRequest(1)).contains("result"));
  }
  ~Client() { session_->Close(); }
  json Send(const json& msg) {
    auto ch = std::make_shared<RecordingChannel>();
    session_->HandleText(msg.dump(), ch);
    return ch->Wait();
  }
  std::vector<std::string> ToolNames() {
    std::vector<std::string> names;
    json r = Send(Request(2, "tools/list", json::object()));
    EXPECT_TRUE(r.contains("result")) << r;
    for (const json& t : r["result"]["tools"]) names.push_back(t["name"]);
    return names;
  }

 private:
  std::shared_ptr<Session> session_;
};

TEST(McpGovernance, EachCallerSeesOnlyWhatTheRoleAllows) {
  FakeExecutor executor;
  McpServer server(ConfigWithRoles(), executor);
  Client runner(server, As("ann", "runner"));
  Client viewer(server, As("vic", "viewer"));
  Client ghost(server, As("gus", "no_such_role"));
  EXPECT_EQ(runner.ToolNames(),
            (std::vector<std::string>{"run_code", "list_languages", "open_session", "close_session", "list_sessions",
                                      "pause_session", "resume_session", "fork_session"}));
  EXPECT_TRUE(viewer.ToolNames().empty());  // inline: false -> no programs
  EXPECT_TRUE(ghost.ToolNames().empty());   // an undefined role sees nothing

  // Forbidden and unknown give the same JSON-RPC error.
  json forbidden = viewer.Send(RunCode(3, {{"language", "python"}, {"code", "print(1)"}}));
  json unknown = viewer.Send(Request(3, "tools/call", {{"name", "run_codex"}, {"arguments", json::object()}}));
  ASSERT_TRUE(forbidden.contains("error")) << forbidden;
  ASSERT_TRUE(unknown.contains("error")) << unknown;
  EXPECT_EQ(forbidden["error"]["code"], unknown["error"]["code"]);
  EXPECT_EQ(forbidden["error"]["message"], "Unknown tool: run_code");
  EXPECT_EQ(unknown["error"]["message"], "Unknown tool: run_codex");
  EXPECT_TRUE(executor.requests.empty());
  json ok = runner.Send(RunCode(4, {{"language", "python"}, {"code", "print(1)"}}));
  EXPECT_FALSE(ok["result"].value("isError", false)) << ok;
  EXPECT_EQ(executor.requests.size(), 1u);
}

TEST(McpGovernance, SessionsCanBeTurnedOffPerEndpointOrInTheConfig) {
  FakeExecutor executor;
  config::Config c = ConfigWithRoles();
  c.endpoints = {{"plain", {{"path", "/mcp"}, {"sessions", false}}}};
  McpServer server(c, executor, nullptr, ServerOptions{.endpoint = "plain"});
  Client runner(server, As("ann", "runner"));
  EXPECT_EQ(runner.ToolNames(), (std::vector<std::string>{"run_code", "list_languages"}));
  json r = runner.Send(RunCode(3, {{"session_id", "s_0123"}, {"code", "print(1)"}}));
  EXPECT_TRUE(r["result"].value("isError", false)) << r;
  EXPECT_EQ(r["result"]["structuredContent"]["error_code"], "E_SESSIONS_DISABLED");
  EXPECT_TRUE(executor.requests.empty());

  config::Config off = ConfigWithRoles();
  off.sessions.enabled = false;
  McpServer server2(off, executor);
  Client runner2(server2, As("ann", "runner"));
  EXPECT_EQ(runner2.ToolNames(), (std::vector<std::string>{"run_code", "list_languages"}));
}

TEST(McpGovernance, AnEndpointWithoutRunCodeOffersNothingHere) {
  FakeExecutor executor;
  config::Config c = config::DefaultConfig();
  c.endpoints = {{"quiet", {{"path", "/mcp"}, {"run_code", false}}}};
  McpServer server(c, executor, nullptr, ServerOptions{.endpoint = "quiet"});
  Client admin(server, As("alice", "admin"));
  EXPECT_TRUE(admin.ToolNames().empty());
}

TEST(McpGovernance, FailClosedAuditRefusesTheCallBeforeItRuns) {
  FakeExecutor executor;
  audit::AuditLog log(std::make_unique<BrokenStore>(), /*fail_closed=*/true);
  McpServer server(config::DefaultConfig(), executor, nullptr, ServerOptions{.audit = &log});
  Client c(server, As("ann", "reader"));
  json r = c.Send(RunCode(5, {{"language", "python"}, {"code", "print(1)"}}));
  ASSERT_TRUE(r.contains("result")) << r;
  EXPECT_TRUE(r["result"].value("isError", false));
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("E_AUDIT_UNAVAILABLE"), std::string::npos) << r;
  EXPECT_TRUE(executor.requests.empty()) << "the executor must not run an unaudited call";
}

TEST(McpGovernance, DegradedAuditLetsTheCallRun) {
  FakeExecutor executor;
  audit::AuditLog log(std::make_unique<BrokenStore>(), /*fail_closed=*/false);
  McpServer server(config::DefaultConfig(), executor, nullptr, ServerOptions{.audit = &log});
  Client c(server, As("ann", "reader"));
  json r = c.Send(RunCode(5, {{"language", "python"}, {"code", "print(1)"}}));
  EXPECT_FALSE(r["result"].value("isError", false)) << r;
  EXPECT_EQ(executor.requests.size(), 1u);
}

TEST(McpGovernance, EveryCallAndRunIsAudited) {
  const auto dir = std::filesystem::temp_directory_path() / ("airlock-mcpgov-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  StatusOr<std::unique_ptr<audit::SqliteAuditStore>> store = audit::SqliteAuditStore::Open((dir / "a.db").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  audit::AuditStore* raw = store->get();
  audit::AuditLog log(std::move(store).value(), /*fail_closed=*/true);
  FakeExecutor executor;
  McpServer server(ConfigWithRoles(), executor, nullptr, ServerOptions{.audit = &log});
  {
    Client ann(server, As("ann", "runner"));
    Client vic(server, As("vic", "viewer"));
    ann.Send(RunCode(6, {{"language", "python"}, {"code", "print('audited')"}}));
    // Rejected arguments are still on record, with secrets redacted.
    ann.Send(RunCode(8, {{"language", "python"}, {"code", "1"}, {"password", "hunter2"}}));
    vic.Send(RunCode(7, {{"language", "python"}, {"code", "print('denied')"}}));
  }
  StatusOr<std::vector<audit::AuditRow>> rows = raw->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  int ann_calls = 0, vic_denied = 0, runs = 0;
  std::string run_id;
  for (const audit::AuditRow& row : *rows) {
    if (const audit::EventRow* e = row.event(); e && e->kind == "tool_call") {
      if (e->actor == "ann" && e->detail["decision"] == "allowed") {
        ++ann_calls;
        if (e->detail["args_redacted"]["code"] == "print('audited')") run_id = e->detail["run_id"];
        EXPECT_EQ(e->detail["role"], "runner");
        EXPECT_EQ(e->detail["key_id"], "k_test");
        EXPECT_EQ(e->detail.dump().find("hunter2"), std::string::npos) << "redacted";
      }
      if (e->actor == "vic" && e->detail["decision"] == "denied") ++vic_denied;
    }
    if (const audit::RunRecord* r = row.run()) {
      ++runs;
      EXPECT_EQ(r->run_id, run_id);  // the event comes first and names the run
      EXPECT_EQ(r->user, "ann");
      EXPECT_EQ(r->kind, "run_code");
      EXPECT_EQ(r->code, "print('audited')");
      EXPECT_EQ(r->status, "SUCCESS");
    }
  }
  EXPECT_EQ(ann_calls, 2);
  EXPECT_NE(rows->size(), 0u);
  bool saw_redacted = false;
  for (const audit::AuditRow& row : *rows) {
    if (const audit::EventRow* e = row.event(); e && e->detail.contains("args_redacted")) {
      saw_redacted |= e->detail["args_redacted"].value("password", "") == "[redacted]";
    }
  }
  EXPECT_TRUE(saw_redacted);
  EXPECT_EQ(vic_denied, 1);
  EXPECT_EQ(runs, 1);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace airlock::mcp
