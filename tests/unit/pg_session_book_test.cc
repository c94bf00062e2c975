// Stateless gateways (issue 30): two SessionRegistries ("gateways") over one
// PostgreSQL session book (sessions/pg_session_book.h), each with its own
// executor standing in for its RunnerFleet. Both executors reach the same
// runner host (a set of open sessions), but each routes a session's cells
// only once it knows the session's host (AdoptSession), as a fleet does.
// A session opened through one gateway is used, listed and closed through
// the other; another caller's id reads as unknown on every gateway; the
// limits count every gateway's sessions; an expired session is claimed
// (closed, audited) by exactly one gateway.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "audit/audit_log.h"
#include "db/pg_database.h"
#include "pg_test_server.h"
#include "sessions/pg_session_book.h"
#include "sessions/session_registry.h"
#include "test_audit_log.h"

namespace airlock::sessions {
namespace {

using runtimes::RunRequest;
using runtimes::RunResult;
using runtimes::RunStatus;

constexpr char kHost[] = "10.0.0.7:7700";

// One runner host, shared by every gateway's executor.
struct RunnerHost {
  std::mutex mu;
  std::set<std::string> open;
  std::map<std::string, int> closes;  // session id -> CloseSession calls that found it
  std::vector<runtimes::SessionSpec> specs;
};

// One gateway's handle on the runner hosts: knows the hosts in `known`,
// and the sessions it opened or adopted.
class GatewayExecutor : public runtimes::CodeExecutor {
 public:
  GatewayExecutor(RunnerHost& host, std::set<std::string> known) : host_(host), known_(std::move(known)) {}

  RunResult Run(const RunRequest& request, const runtimes::ProgressFn&, CancelToken&,
                runtimes::BridgeHandler* = nullptr) override {
    RunResult r;
    std::lock_guard<std::mutex> lock(host_.mu);
    if (!routes_.count(request.session_id) || !host_.open.count(request.session_id)) {
      r.status = RunStatus::kInternalError;
      r.error_code = "E_SESSION_NOT_FOUND";
      return r;
    }
    r.status = RunStatus::kOk;
    r.stdout_text = request.session_id + ":" + request.code;
    return r;
  }
  std::vector<runtimes::LanguageInfo> Languages() override { return {}; }
  Status OpenSession(const runtimes::SessionSpec& spec) override {
    std::lock_guard<std::mutex> lock(host_.mu);
    host_.open.insert(spec.id);
    host_.specs.push_back(spec);
    routes_[spec.id] = kHost;
    return OkStatus();
  }
  Status CloseSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(host_.mu);
    if (!routes_.erase(id)) return NotFound("no such session");
    if (!host_.open.erase(id)) return NotFound("no such session");
    ++host_.closes[id];
    return OkStatus();
  }
  std::string SessionHost(const std::string& id) override {
    std::lock_guard<std::mutex> lock(host_.mu);
    auto it = routes_.find(id);
    return it == routes_.end() ? "" : it->second;
  }
  Status AdoptSession(const std::string& id, const std::string& host) override {
    std::lock_guard<std::mutex> lock(host_.mu);
    ++adoptions;
    if (!known_.count(host)) return Unavailable("the runner host " + host + " is not among this gateway's hosts");
    routes_[id] = host;
    return OkStatus();
  }

  int adoptions = 0;  // guarded by host_.mu

 private:
  RunnerHost& host_;
  const std::set<std::string> known_;
  std::map<std::string, std::string> routes_;  // guarded by host_.mu
};

class PgSessionBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dsn_ = testing::PgTestServer::Get().NewDatabase();
    ASSERT_FALSE(dsn_.empty()) << testing::PgTestServer::Get().error();
    ASSERT_NE(audit_.get(), nullptr);
    config_.max_per_caller = 2;
    config_.idle_timeout_s = 60;
    config_.max_lifetime_s = 600;
  }

  // A gateway's book: its own connections to the one database.
  std::shared_ptr<SessionBook> Book(const std::string& gateway) {
    StatusOr<std::shared_ptr<state::PgDatabase>> db = state::PgDatabase::Connect(dsn_);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return nullptr;
    StatusOr<std::unique_ptr<PgSessionBook>> book = PgSessionBook::Open(*db, gateway);
    EXPECT_TRUE(book.ok()) << book.status().ToString();
    return book.ok() ? std::shared_ptr<SessionBook>(std::move(book).value()) : nullptr;
  }

  RunResult Cell(GatewayExecutor& executor, SessionRegistry& registry, const std::string& owner,
                 const std::string& id) {
    StatusOr<SessionInfo> s = registry.BeginCall(owner, id);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return RunResult{};
    RunResult r;
    if (!s->lost_reason.empty()) {
      r = runtimes::InternalErrorResult(s->language, "E_SESSION_LOST", s->lost_reason);
    } else {
      RunRequest request;
      request.language = s->language;
      request.session_id = id;
      request.code = "x";
      CancelToken none;
      r = executor.Run(request, nullptr, none);
    }
    registry.EndCall(id, &r);
    return r;
  }

  std::string dsn_;
  tests::TempAuditLog audit_{"pg_session_book_test"};
  config::SessionsConfig config_;
  RunnerHost host_;
};

TEST_F(PgSessionBookTest, ASessionOpenedThroughOneGatewayRunsListsAndClosesThroughAnother) {
  GatewayExecutor exec_a(host_, {kHost});
  GatewayExecutor exec_b(host_, {kHost});
  SessionRegistry a(exec_a, config_, 8, audit_.get(), Book("gw-a"));
  SessionRegistry b(exec_b, config_, 8, audit_.get(), Book("gw-b"));
  ASSERT_TRUE(a.shared());

  StatusOr<SessionInfo> s = a.Open("api_key:alice", {.endpoint = "/mcp", .language = "python"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->runner_host, kHost);
  {
    std::lock_guard<std::mutex> lock(host_.mu);
    ASSERT_EQ(host_.specs.size(), 1u);
    EXPECT_TRUE(host_.specs[0].shared) << "the runner host must keep it past gateway A's stream";
    EXPECT_EQ(host_.specs[0].max_lifetime_s, 600u);
  }

  std::vector<SessionInfo> listed = b.List("api_key:alice");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, s->id);
  EXPECT_EQ(listed[0].runner_host, kHost);

  RunResult r = Cell(exec_b, b, "api_key:alice", s->id);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.error_code << " " << r.message;
  EXPECT_EQ(r.stdout_text, s->id + ":x");
  r = Cell(exec_a, a, "api_key:alice", s->id);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.error_code << " " << r.message;
  listed = a.List("api_key:alice");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].calls, 2u) << "calls through either gateway count";
  EXPECT_EQ(listed[0].calls_in_flight, 0);

  EXPECT_TRUE(b.Close("api_key:alice", s->id).ok());
  {
    std::lock_guard<std::mutex> lock(host_.mu);
    EXPECT_TRUE(host_.open.empty()) << "gateway B closed the jail gateway A opened";
  }
  EXPECT_EQ(a.BeginCall("api_key:alice", s->id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(a.List("api_key:alice").empty());
  EXPECT_EQ(a.open_count(), 0u);
}

// A code-mode session's mode is in the shared row: the gateway that did
// not open it still knows its cells are execute programs, and the runner
// host was asked for a code-mode session.
TEST_F(PgSessionBookTest, ACodeModeSessionIsOneOnEveryGateway) {
  GatewayExecutor exec_a(host_, {kHost});
  GatewayExecutor exec_b(host_, {kHost});
  SessionRegistry a(exec_a, config_, 8, audit_.get(), Book("gw-a"));
  SessionRegistry b(exec_b, config_, 8, audit_.get(), Book("gw-b"));
  StatusOr<SessionInfo> s =
      a.Open("api_key:alice", {.endpoint = "/mcp", .language = "python", .mode = "codemode"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->mode, "codemode");
  {
    std::lock_guard<std::mutex> lock(host_.mu);
    ASSERT_EQ(host_.specs.size(), 1u);
    EXPECT_TRUE(host_.specs[0].code_mode);
  }
  StatusOr<SessionInfo> seen = b.BeginCall("api_key:alice", s->id);
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(seen->mode, "codemode");
  b.EndCall(s->id, nullptr);
  StatusOr<SessionInfo> plain = a.Open("api_key:alice", {.endpoint = "/mcp", .language = "python"});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  std::vector<SessionInfo> listed = b.List("api_key:alice");
  ASSERT_EQ(listed.size(), 2u);
  for (const SessionInfo& l : listed) EXPECT_EQ(l.mode, l.id == s->id ? "codemode" : "") << l.id;
  EXPECT_TRUE(a.Close("api_key:alice", s->id).ok());
  EXPECT_TRUE(a.Close("api_key:alice", plain->id).ok());
}

TEST_F(PgSessionBookTest, AnotherCallersSessionIsUnknownOnEveryGateway) {
  GatewayExecutor exec_a(host_, {kHost});
  GatewayExecutor exec_b(host_, {kHost});
  SessionRegistry a(exec_a, config_, 8, audit_.get(), Book("gw-a"));
  SessionRegistry b(exec_b, config_, 8, audit_.get(), Book("gw-b"));
  StatusOr<SessionInfo> s = a.Open("api_key:alice", {.language = "python"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();

  const std::string unknown = "s_" + std::string(32, '0');
  for (SessionRegistry* r : {&a, &b}) {
    Status foreign = r->BeginCall("api_key:mallory", s->id).status();
    Status none = r->BeginCall("api_key:mallory", unknown).status();
    EXPECT_EQ(foreign.code(), StatusCode::kNotFound);
    std::string redacted = foreign.message();
    redacted.replace(redacted.find(s->id), s->id.size(), unknown);
    EXPECT_EQ(redacted, none.message()) << "a foreign id must read exactly like an unknown one";
    EXPECT_EQ(r->Close("api_key:mallory", s->id).code(), StatusCode::kNotFound);
    EXPECT_TRUE(r->List("api_key:mallory").empty());
  }
  {
    std::lock_guard<std::mutex> lock(host_.mu);
    EXPECT_EQ(exec_b.adoptions, 0) << "gateway B routed a foreign session to its host";
  }
  // Still alice's, untouched.
  RunResult r = Cell(exec_b, b, "api_key:alice", s->id);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.error_code << " " << r.message;
  std::vector<SessionInfo> listed = a.List("api_key:alice");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].calls, 1u);
}

TEST_F(PgSessionBookTest, TheLimitsCountTheSessionsOfEveryGateway) {
  GatewayExecutor exec_a(host_, {kHost});
  GatewayExecutor exec_b(host_, {kHost});
  SessionRegistry a(exec_a, config_, 3, audit_.get(), Book("gw-a"));
  SessionRegistry b(exec_b, config_, 3, audit_.get(), Book("gw-b"));
  ASSERT_TRUE(a.Open("api_key:alice", {.language = "python"}).ok());
  ASSERT_TRUE(b.Open("api_key:alice", {.language = "python"}).ok());
  StatusOr<SessionInfo> third = a.Open("api_key:alice", {.language = "python"});
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("maximum per caller"), std::string::npos) << third.status().message();
  third = b.Open("api_key:alice", {.language = "python"});
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);

  ASSERT_TRUE(b.Open("api_key:bob", {.language = "python"}).ok());
  StatusOr<SessionInfo> over = a.Open("api_key:carol", {.language = "python"});
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("maximum of 3"), std::string::npos) << over.status().message();
  EXPECT_EQ(a.open_count(), 3u);
  EXPECT_EQ(b.open_count(), 3u);
}

TEST_F(PgSessionBookTest, OpensRacingOnTwoGatewaysNeverOverrunTheTotal) {
  GatewayExecutor exec_a(host_, {kHost});
  GatewayExecutor exec_b(host_, {kHost});
  config_.max_per_caller = 100;
  SessionRegistry a(exec_a, config_, 5, audit_.get(), Book("gw-a"));
  SessionRegistry b(exec_b, config_, 5, audit_.get(), Book("gw-b"));
  std::vector<std::future<bool>> opens;
  for (int i = 0; i < 16; ++i) {
    SessionRegistry& r = i % 2 ? a : b;
    opens.push_back(std::async(std::launch::async, [&r, i] {
      return r.Open("api_key:u" + std::to_string(i % 3), {.language = "python"}).ok();
    }));
  }
  int ok = 0;
  for (auto& f : opens) ok += f.get() ? 1 : 0;
  EXPECT_EQ(ok, 5);
  EXPECT_EQ(a.open_count(), 5u);
}

TEST_F(PgSessionBookTest, AnExpiredSessionIsClosedByExactlyOneGateway) {
  GatewayExecutor exec_a(host_, {kHost});
  GatewayExecutor exec_b(host_, {kHost});
  config_.max_per_caller = 100;
  SessionRegistry a(exec_a, config_, 100, audit_.get(), Book("gw-a"));
  SessionRegistry b(exec_b, config_, 100, audit_.get(), Book("gw-b"));
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    StatusOr<SessionInfo> s = (i % 2 ? a : b).Open("api_key:alice", {.language = "python"});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ids.push_back(s->id);
  }
  const int64_t later = audit::NowMs() + 3600 * 1000;  // past the idle timeout and the lifetime
  std::vector<std::future<size_t>> reapers;
  for (int i = 0; i < 4; ++i) {
    SessionRegistry& r = i % 2 ? a : b;
    reapers.push_back(std::async(std::launch::async, [&r, later] { return r.ExpireNow(later); }));
  }
  size_t claimed = 0;
  for (auto& f : reapers) claimed += f.get();
  EXPECT_EQ(claimed, ids.size()) << "each expired session is claimed once, by one gateway";
  {
    std::lock_guard<std::mutex> lock(host_.mu);
    EXPECT_TRUE(host_.open.empty()) << "a gateway closed the jails of sessions another gateway opened";
    for (const std::string& id : ids) EXPECT_EQ(host_.closes[id], 1) << id;
  }
  EXPECT_EQ(a.open_count(), 0u);
  std::vector<std::string> kinds = audit_.EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_expire"), static_cast<long>(ids.size()));
}

TEST_F(PgSessionBookTest, ASessionOnAHostThisGatewayLacksIsLostNamingTheHost) {
  GatewayExecutor exec_a(host_, {kHost});
  GatewayExecutor exec_b(host_, {"10.0.0.8:7700"});  // does not have gateway A's host
  SessionRegistry a(exec_a, config_, 8, audit_.get(), Book("gw-a"));
  SessionRegistry b(exec_b, config_, 8, audit_.get(), Book("gw-b"));
  StatusOr<SessionInfo> s = a.Open("api_key:alice", {.language = "python"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  StatusOr<SessionInfo> use = b.BeginCall("api_key:alice", s->id);
  ASSERT_TRUE(use.ok()) << use.status().ToString();
  EXPECT_NE(use->lost_reason.find(kHost), std::string::npos) << use->lost_reason;
  b.EndCall(s->id, nullptr);
  // Lost for good, on every gateway (E_SESSION_LOST with the same reason).
  StatusOr<SessionInfo> again = a.BeginCall("api_key:alice", s->id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->lost_reason, use->lost_reason);
  a.EndCall(s->id, nullptr);
  EXPECT_TRUE(b.Close("api_key:alice", s->id).ok()) << "closing a lost session succeeds";
  std::vector<std::string> kinds = audit_.EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_lost"), 1);
}

TEST_F(PgSessionBookTest, RehomeIsACompareAndSetEveryGatewaySees) {
  std::shared_ptr<SessionBook> a = Book("gw-a");
  std::shared_ptr<SessionBook> b = Book("gw-b");
  ASSERT_TRUE(a && b);
  SessionInfo row;
  row.id = "s_00000000000000000000000000000001";
  row.owner = "api_key:alice";
  row.language = "python";
  row.isolation = "wasm";
  row.idle_timeout_s = 60;
  const int64_t now = audit::NowMs();
  row.created_at_ms = row.last_used_ms = now;
  row.ends_at_ms = now + 600'000;
  row.expires_at_ms = now + 60'000;
  ASSERT_TRUE(a->Reserve(row, 2, 8).ok());
  ASSERT_TRUE(a->Activate(row.id, "10.0.0.1:7700", now, 600).ok());
  std::optional<SessionInfo> moved = a->Rehome(row.id, "10.0.0.1:7700", "10.0.0.2:7700");
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->runner_host, "10.0.0.2:7700");
  EXPECT_FALSE(b->Rehome(row.id, "10.0.0.1:7700", "10.0.0.3:7700").has_value()) << "a stale move won";
  EXPECT_FALSE(b->Rehome("s_unknown", "10.0.0.1:7700", "10.0.0.3:7700").has_value());
  StatusOr<SessionInfo> use = b->BeginCall("api_key:alice", row.id, now + 1000);
  ASSERT_TRUE(use.ok()) << use.status().ToString();
  EXPECT_EQ(use->runner_host, "10.0.0.2:7700");
}

TEST_F(PgSessionBookTest, AGatewayThatStopsLeavesItsSessionsToTheOthers) {
  GatewayExecutor exec_b(host_, {kHost});
  SessionRegistry b(exec_b, config_, 8, audit_.get(), Book("gw-b"));
  std::string id;
  {
    GatewayExecutor exec_a(host_, {kHost});
    SessionRegistry a(exec_a, config_, 8, audit_.get(), Book("gw-a"));
    StatusOr<SessionInfo> s = a.Open("api_key:alice", {.language = "python"});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    id = s->id;
  }  // gateway A shuts down (rolled)
  {
    std::lock_guard<std::mutex> lock(host_.mu);
    EXPECT_EQ(host_.open.count(id), 1u) << "gateway A closed a session on its way out";
  }
  RunResult r = Cell(exec_b, b, "api_key:alice", id);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.error_code << " " << r.message;
  EXPECT_TRUE(b.Close("api_key:alice", id).ok());
}

}  // namespace
}  // namespace airlock::sessions
