// The server's book of sessions (sessions/session_registry.h): ownership,
// per-caller and total limits, idle and lifetime expiry, lost sessions
// (including a runner that restarted), pause, resume and fork (the owner
// rule, a fork counted as an open, a failed fork leaving no row), and the
// audit events; against a fake executor that records what it was asked.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "audit/audit_log.h"
#include "audit/sqlite_audit_store.h"
#include "test_audit_log.h"
#include "base/time_format.h"
#include "sessions/session_registry.h"

namespace airlock::sessions {
namespace {

class FakeSessions : public runtimes::CodeExecutor {
 public:
  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn&, CancelToken&,
                          runtimes::BridgeHandler*) override {
    std::lock_guard<std::mutex> lock(mu);
    runtimes::RunResult r;
    if (!open.count(request.session_id)) {
      r.status = runtimes::RunStatus::kInternalError;
      r.error_code = "E_SESSION_NOT_FOUND";
      return r;
    }
    r.status = runtimes::RunStatus::kOk;
    return r;
  }
  std::vector<runtimes::LanguageInfo> Languages() override { return {}; }
  Status OpenSession(const runtimes::SessionSpec& spec) override {
    std::lock_guard<std::mutex> lock(mu);
    if (spec.language != "python") return NotFound("no sessions for " + spec.language);
    open.insert(spec.id);
    last_spec = spec;
    return OkStatus();
  }
  Status CloseSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu);
    paused.erase(id);
    return open.erase(id) ? OkStatus() : NotFound("no such session");
  }
  Status PauseSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu);
    ++checkpoint_calls;
    if (!open.count(id)) return NotFound("no such session");
    if (!pause_status.ok()) return pause_status;
    paused.insert(id);
    return OkStatus();
  }
  Status ResumeSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu);
    ++checkpoint_calls;
    if (!open.count(id)) return NotFound("no such session");
    paused.erase(id);
    return OkStatus();
  }
  Status ForkSession(const std::string& id, const runtimes::SessionSpec& copy) override {
    std::lock_guard<std::mutex> lock(mu);
    ++checkpoint_calls;
    if (!open.count(id)) return NotFound("no such session");
    if (!fork_status.ok()) return fork_status;
    open.insert(copy.id);
    forks.emplace_back(id, copy);
    return OkStatus();
  }
  // Hosts (a fleet's): every session opens on host_of_new; the registry's
  // AdoptSession calls are recorded.
  std::string SessionHost(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu);
    return open.count(id) ? host_of_new : "";
  }
  Status AdoptSession(const std::string& id, const std::string& host) override {
    std::lock_guard<std::mutex> lock(mu);
    adopted.emplace_back(id, host);
    return OkStatus();
  }
  void SetSessionMovedHandler(SessionMovedFn handler) override {
    std::lock_guard<std::mutex> lock(mu);
    moved = std::move(handler);
  }
  std::mutex mu;
  std::set<std::string> open, paused;
  std::string host_of_new;
  std::vector<std::pair<std::string, std::string>> adopted;  // id, host
  SessionMovedFn moved;
  runtimes::SessionSpec last_spec;
  Status pause_status, fork_status;  // what PauseSession / ForkSession answer when not OK
  int checkpoint_calls = 0;
  std::vector<std::pair<std::string, runtimes::SessionSpec>> forks;  // source id, the copy's spec
};

class SessionRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(audit_.get(), nullptr);
    config_.max_per_caller = 2;
    config_.idle_timeout_s = 60;
    config_.max_lifetime_s = 600;
  }
  std::vector<std::string> EventKinds() { return audit_.EventKinds(); }

  tests::TempAuditLog audit_{"registry_test"};
  config::SessionsConfig config_;
  FakeSessions executor_;
};

TEST_F(SessionRegistryTest, IdsAreUnguessableAndOwnedByTheirOpener) {
  SessionRegistry registry(executor_, config_, 8, audit_.get());
  auto a = registry.Open("key:alice", {.language = "python"});
  auto b = registry.Open("key:alice", {.language = "python"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->id, b->id);
  EXPECT_EQ(a->id.size(), 2u + 32u);  // "s_" + 128 bits in hex
  EXPECT_EQ(a->id.rfind("s_", 0), 0u);
  EXPECT_EQ(executor_.last_spec.cpu_budget_ms, config_.max_cpu_s * 1000);

  // Bob is told exactly what an unknown id gets.
  auto foreign = registry.BeginCall("key:bob", a->id);
  auto unknown = registry.BeginCall("key:bob", "s_" + std::string(32, '0'));
  ASSERT_FALSE(foreign.ok());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(foreign.status().code(), StatusCode::kNotFound);
  std::string fm = foreign.status().message(), um = unknown.status().message();
  fm.replace(fm.find(a->id), a->id.size(), "ID");
  um.replace(um.find("s_" + std::string(32, '0')), 34, "ID");
  EXPECT_EQ(fm, um);
  EXPECT_EQ(registry.Close("key:bob", a->id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(registry.List("key:bob").empty());
  EXPECT_EQ(registry.List("key:alice").size(), 2u);
  EXPECT_TRUE(registry.BeginCall("key:alice", a->id).ok());
  EXPECT_TRUE(registry.Close("key:alice", a->id).ok());
  EXPECT_FALSE(executor_.open.count(a->id)) << "closing must destroy the session in the executor";
}

TEST_F(SessionRegistryTest, PerCallerAndTotalLimitsAreClearRefusals) {
  SessionRegistry registry(executor_, config_, 3, audit_.get());
  ASSERT_TRUE(registry.Open("key:alice", {.language = "python"}).ok());
  ASSERT_TRUE(registry.Open("key:alice", {.language = "python"}).ok());
  auto third = registry.Open("key:alice", {.language = "python"});
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("per caller"), std::string::npos) << third.status().message();
  ASSERT_TRUE(registry.Open("key:bob", {.language = "python"}).ok());
  auto over = registry.Open("key:carol", {.language = "python"});
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("maximum of 3"), std::string::npos) << over.status().message();
  EXPECT_EQ(registry.Open("key:carol", {.language = "cobol"}).status().code(), StatusCode::kResourceExhausted);
  auto long_idle = registry.Open("key:bob", {.language = "python", .idle_timeout_s = 100000});
  EXPECT_EQ(long_idle.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(executor_.open.size(), 3u);
}

TEST_F(SessionRegistryTest, ExpiryClosesIdleAndOldSessions) {
  SessionRegistry registry(executor_, config_, 8, audit_.get());
  auto idle = registry.Open("key:alice", {.language = "python", .idle_timeout_s = 5});
  auto busy = registry.Open("key:alice", {.language = "python"});
  ASSERT_TRUE(idle.ok() && busy.ok());
  const int64_t now = audit::NowMs();
  EXPECT_EQ(registry.ExpireNow(now + 1000), 0u);
  EXPECT_EQ(registry.ExpireNow(now + 6000), 1u);  // idle for more than 5 s
  EXPECT_FALSE(executor_.open.count(idle->id));
  EXPECT_EQ(registry.BeginCall("key:alice", idle->id).status().code(), StatusCode::kNotFound);
  // Activity moves the idle deadline, never the lifetime; a call in flight
  // longer than the idle timeout does not idle its session out.
  EXPECT_TRUE(registry.BeginCall("key:alice", busy->id).ok());
  EXPECT_EQ(registry.ExpireNow(audit::NowMs() + 120'000), 0u);
  EXPECT_TRUE(registry.BeginCall("key:alice", busy->id).ok()) << "a session in a call must stay usable";
  registry.EndCall(busy->id, nullptr);
  registry.EndCall(busy->id, nullptr);
  EXPECT_EQ(registry.ExpireNow(audit::NowMs() + 30'000), 0u);
  EXPECT_EQ(registry.ExpireNow(now + 601'000), 1u);  // past max_lifetime_s
  EXPECT_TRUE(executor_.open.empty());
  const std::vector<std::string> kinds = EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_open"), 2);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_expire"), 2);
}

TEST_F(SessionRegistryTest, ARestartedRunnerLosesTheSessionForGood) {
  SessionRegistry registry(executor_, config_, 8, audit_.get());
  auto s = registry.Open("key:alice", {.language = "python"});
  ASSERT_TRUE(s.ok());
  executor_.open.clear();  // the runner restarted: its sessions are gone
  ASSERT_TRUE(registry.BeginCall("key:alice", s->id).ok());
  runtimes::RunRequest req;
  req.session_id = s->id;
  CancelToken cancel;
  runtimes::RunResult r = executor_.Run(req, nullptr, cancel, nullptr);
  registry.EndCall(s->id, &r);
  EXPECT_EQ(r.error_code, "E_SESSION_LOST");
  EXPECT_NE(r.message.find("restarted"), std::string::npos) << r.message;
  auto again = registry.BeginCall("key:alice", s->id);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->lost_reason.find("restarted"), std::string::npos) << "later calls must keep the reason";
  EXPECT_TRUE(registry.Close("key:alice", s->id).ok()) << "a lost session can still be closed";
  const std::vector<std::string> kinds = EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_lost"), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_close"), 1);
}

TEST_F(SessionRegistryTest, ARunnerThatStoppedMidCallLosesTheSession) {
  SessionRegistry registry(executor_, config_, 8, audit_.get());
  auto s = registry.Open("key:alice", {.language = "python"});
  ASSERT_TRUE(s.ok());
  runtimes::RunResult r =
      runtimes::InternalErrorResult("python", "runner_unavailable", "the code runner process exited unexpectedly");
  registry.EndCall(s->id, &r);
  EXPECT_EQ(r.error_code, "E_SESSION_LOST");
  EXPECT_FALSE(registry.BeginCall("key:alice", s->id)->lost_reason.empty());
}

TEST_F(SessionRegistryTest, DestroyingTheRegistryClosesEverySession) {
  {
    SessionRegistry registry(executor_, config_, 8, audit_.get());
    ASSERT_TRUE(registry.Open("key:alice", {.language = "python"}).ok());
    ASSERT_TRUE(registry.Open("key:bob", {.language = "python"}).ok());
    EXPECT_EQ(executor_.open.size(), 2u);
  }
  EXPECT_TRUE(executor_.open.empty());
}

// The registry's row `id` of `owner`, as list_sessions shows it.
std::optional<SessionInfo> Row(SessionRegistry& registry, const std::string& owner, const std::string& id) {
  for (const SessionInfo& s : registry.List(owner)) {
    if (s.id == id) return s;
  }
  return std::nullopt;
}

TEST_F(SessionRegistryTest, CheckpointsFollowTheOwnerRuleAndAreNotCalls) {
  SessionRegistry registry(executor_, config_, 8, audit_.get());
  auto a = registry.Open("key:alice", {.language = "python", .isolation = "wasm"});
  ASSERT_TRUE(a.ok());
  const std::string unknown = "s_" + std::string(32, '0');
  // Bob gets exactly what an unknown id gets, and the runner is not asked.
  for (const std::string& id : {a->id, unknown}) {
    EXPECT_EQ(registry.Pause("key:bob", id).code(), StatusCode::kNotFound);
    EXPECT_EQ(registry.Resume("key:bob", id).code(), StatusCode::kNotFound);
    EXPECT_EQ(registry.Fork("key:bob", id).status().code(), StatusCode::kNotFound);
  }
  std::string foreign = registry.Pause("key:bob", a->id).message();
  std::string none = registry.Pause("key:bob", unknown).message();
  foreign.replace(foreign.find(a->id), a->id.size(), "ID");
  none.replace(none.find(unknown), unknown.size(), "ID");
  EXPECT_EQ(foreign, none);
  EXPECT_EQ(SessionErrorCode(registry.Fork("key:bob", a->id).status(), ""), "E_SESSION_NOT_FOUND");
  EXPECT_EQ(executor_.checkpoint_calls, 0);
  EXPECT_TRUE(registry.List("key:bob").empty()) << "a refused fork leaves bob nothing";

  // Alice's own: paused in the runner, then resumed; neither is a call nor
  // moves a deadline.
  const SessionInfo before = *Row(registry, "key:alice", a->id);
  ASSERT_TRUE(registry.Pause("key:alice", a->id).ok());
  EXPECT_TRUE(executor_.paused.count(a->id));
  const SessionInfo paused = *Row(registry, "key:alice", a->id);
  EXPECT_EQ(paused.calls, before.calls);
  EXPECT_EQ(paused.expires_at_ms, before.expires_at_ms);
  ASSERT_TRUE(registry.Resume("key:alice", a->id).ok());
  EXPECT_FALSE(executor_.paused.count(a->id));
  ASSERT_TRUE(registry.Pause("key:alice", a->id).ok());

  // A paused session still idles out, and its close reaches the runner.
  EXPECT_EQ(registry.ExpireNow(before.expires_at_ms + 1), 1u);
  EXPECT_FALSE(executor_.open.count(a->id));
  EXPECT_EQ(registry.Resume("key:alice", a->id).code(), StatusCode::kNotFound);
  const std::vector<std::string> kinds = EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_pause"), 2);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_resume"), 1);
}

TEST_F(SessionRegistryTest, AForkIsANewSessionOfTheOwnerCountedAgainstTheLimits) {
  SessionRegistry registry(executor_, config_, 3, audit_.get());  // max_per_caller 2, max_total 3
  auto a = registry.Open("key:alice", {.language = "python", .isolation = "wasm", .idle_timeout_s = 30,
                                       .memory_mb = 300, .mode = "codemode"});
  ASSERT_TRUE(a.ok());
  StatusOr<SessionInfo> f = registry.Fork("key:alice", a->id);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_NE(f->id, a->id);
  EXPECT_EQ(f->id.size(), 2u + 32u);
  EXPECT_EQ(f->owner, "key:alice");
  EXPECT_EQ(f->language, "python");
  EXPECT_EQ(f->isolation, "wasm");
  EXPECT_EQ(f->memory_mb, 300u);
  EXPECT_EQ(f->idle_timeout_s, 30u);
  EXPECT_EQ(f->mode, "codemode");
  EXPECT_EQ(f->calls, 0u);
  EXPECT_GE(f->created_at_ms, a->created_at_ms);
  ASSERT_EQ(executor_.forks.size(), 1u);
  EXPECT_EQ(executor_.forks[0].first, a->id);
  const runtimes::SessionSpec& copy = executor_.forks[0].second;
  EXPECT_EQ(copy.id, f->id);
  EXPECT_EQ(copy.language, "python");
  EXPECT_EQ(copy.isolation, "wasm");
  EXPECT_EQ(copy.memory_mb, 300u);
  EXPECT_TRUE(copy.code_mode);
  EXPECT_EQ(copy.max_lifetime_s, config_.max_lifetime_s);
  EXPECT_EQ(registry.List("key:alice").size(), 2u);
  EXPECT_TRUE(registry.BeginCall("key:alice", f->id).ok()) << "the copy is usable like any session";
  registry.EndCall(f->id, nullptr);

  // Per caller: alice holds two, her maximum.
  StatusOr<SessionInfo> third = registry.Fork("key:alice", f->id);
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(SessionErrorCode(third.status(), ""), "E_SESSION_LIMIT");
  EXPECT_NE(third.status().message().find("per caller"), std::string::npos) << third.status().message();
  // In all: bob's one makes three.
  auto b = registry.Open("key:bob", {.language = "python", .isolation = "wasm"});
  ASSERT_TRUE(b.ok());
  StatusOr<SessionInfo> over = registry.Fork("key:bob", b->id);
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("maximum of 3"), std::string::npos) << over.status().message();
  EXPECT_EQ(executor_.forks.size(), 1u) << "a fork over a limit never reaches the runner";
  EXPECT_EQ(registry.open_count(), 3u);

  // The copy closes on its own; the source goes on.
  EXPECT_TRUE(registry.Close("key:alice", f->id).ok());
  EXPECT_FALSE(executor_.open.count(f->id));
  EXPECT_TRUE(executor_.open.count(a->id));
  const std::vector<std::string> kinds = EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_fork"), 1);
}

TEST_F(SessionRegistryTest, AForkTheRunnerRefusesLeavesNoRow) {
  SessionRegistry registry(executor_, config_, 8, audit_.get());
  auto a = registry.Open("key:alice", {.language = "python"});
  ASSERT_TRUE(a.ok());
  executor_.fork_status = FailedPrecondition(
      "E_SESSION_NOT_PAUSABLE: python sessions in the native tier cannot be paused or forked");
  StatusOr<SessionInfo> refused = registry.Fork("key:alice", a->id);
  EXPECT_EQ(SessionErrorCode(refused.status(), ""), "E_SESSION_NOT_PAUSABLE");
  EXPECT_EQ(SessionErrorMessage(refused.status()), "python sessions in the native tier cannot be paused or forked");
  executor_.fork_status = FailedPrecondition("the session could not be restored: no reason given");
  EXPECT_EQ(SessionErrorCode(registry.Fork("key:alice", a->id).status(), "other"), "other");
  EXPECT_EQ(registry.List("key:alice").size(), 1u);
  EXPECT_EQ(registry.open_count(), 1u) << "a failed fork's reservation must be gone";
  EXPECT_TRUE(Row(registry, "key:alice", a->id)->lost_reason.empty()) << "a refused fork loses nothing";
  // Its place is free again: max_per_caller is 2.
  EXPECT_TRUE(registry.Open("key:alice", {.language = "python"}).ok());
  const std::vector<std::string> kinds = EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_fork"), 0);
}

TEST_F(SessionRegistryTest, BusyAndLostSessionsAreRefusedByName) {
  SessionRegistry registry(executor_, config_, 8, audit_.get());
  auto a = registry.Open("key:alice", {.language = "python", .isolation = "wasm"});
  ASSERT_TRUE(a.ok());
  // A call in flight (through any gateway of the book): busy.
  ASSERT_TRUE(registry.BeginCall("key:alice", a->id).ok());
  Status busy = registry.Pause("key:alice", a->id);
  EXPECT_EQ(busy.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(SessionErrorCode(busy, ""), "E_SESSION_BUSY");
  EXPECT_EQ(SessionErrorCode(registry.Fork("key:alice", a->id).status(), ""), "E_SESSION_BUSY");
  EXPECT_EQ(registry.open_count(), 1u);
  registry.EndCall(a->id, nullptr);
  EXPECT_EQ(executor_.checkpoint_calls, 0);

  // The runner loses it while pausing: noted, and said from then on
  // without asking the runner again.
  executor_.pause_status = FailedPrecondition("E_SESSION_LOST: the session was lost: the interpreter did not answer");
  Status lost = registry.Pause("key:alice", a->id);
  EXPECT_EQ(SessionErrorCode(lost, ""), "E_SESSION_LOST");
  EXPECT_NE(Row(registry, "key:alice", a->id)->lost_reason.find("did not answer"), std::string::npos);
  const int asked = executor_.checkpoint_calls;
  EXPECT_EQ(SessionErrorCode(registry.Resume("key:alice", a->id), ""), "E_SESSION_LOST");
  EXPECT_EQ(SessionErrorCode(registry.Fork("key:alice", a->id).status(), ""), "E_SESSION_LOST");
  EXPECT_EQ(executor_.checkpoint_calls, asked);

  // A runner that restarted no longer has it: lost too.
  executor_.pause_status = OkStatus();
  auto b = registry.Open("key:alice", {.language = "python", .isolation = "wasm"});
  ASSERT_TRUE(b.ok());
  executor_.open.erase(b->id);
  Status gone = registry.Resume("key:alice", b->id);
  EXPECT_EQ(SessionErrorCode(gone, ""), "E_SESSION_LOST");
  EXPECT_NE(gone.message().find("restarted"), std::string::npos) << gone.message();
  EXPECT_FALSE(Row(registry, "key:alice", b->id)->lost_reason.empty());
  const std::vector<std::string> kinds = EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_lost"), 2);
}

TEST_F(SessionRegistryTest, ASessionMovedOffADrainingHostIsRehomedOnceAndItsCallsGoThere) {
  executor_.host_of_new = "10.0.0.1:7700";
  SessionRegistry registry(executor_, config_, 100, audit_.get());
  ASSERT_TRUE(executor_.moved) << "the registry did not ask to hear of moves";
  StatusOr<SessionInfo> s = registry.Open("alice", {.language = "python"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->runner_host, "10.0.0.1:7700");
  executor_.moved(s->id, "10.0.0.1:7700", "10.0.0.2:7700");
  executor_.moved(s->id, "10.0.0.1:7700", "10.0.0.3:7700");  // stale: it is not there any more
  executor_.moved("s_unknown", "10.0.0.1:7700", "10.0.0.2:7700");
  StatusOr<SessionInfo> use = registry.BeginCall("alice", s->id);
  ASSERT_TRUE(use.ok());
  EXPECT_EQ(use->runner_host, "10.0.0.2:7700");
  registry.EndCall(s->id, nullptr);
  {
    std::lock_guard<std::mutex> lock(executor_.mu);
    ASSERT_FALSE(executor_.adopted.empty());
    EXPECT_EQ(executor_.adopted.back(), std::make_pair(s->id, std::string("10.0.0.2:7700")))
        << "the call was not routed to the session's new host";
  }
  const std::vector<std::string> kinds = EventKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "session_move"), 1);
}

TEST(SessionErrorCodeTest, NamesEachRefusal) {
  EXPECT_EQ(SessionErrorCode(NotFound("x"), "f"), "E_SESSION_NOT_FOUND");
  EXPECT_EQ(SessionErrorCode(ResourceExhausted("x"), "f"), "E_SESSION_LIMIT");
  EXPECT_EQ(SessionErrorCode(Unavailable("x"), "f"), "runner_unavailable");
  EXPECT_EQ(SessionErrorCode(DeadlineExceeded("x"), "f"), "runner_unavailable");
  EXPECT_EQ(SessionErrorCode(FailedPrecondition("E_SESSION_BUSY: a call runs"), "f"), "E_SESSION_BUSY");
  EXPECT_EQ(SessionErrorCode(FailedPrecondition("E_SESSION_LOSTX: no"), "f"), "f");
  EXPECT_EQ(SessionErrorCode(FailedPrecondition("no image"), "f"), "f");
  EXPECT_EQ(SessionErrorMessage(FailedPrecondition("E_SESSION_LOST: the session was lost: x")),
            "the session was lost: x");
  EXPECT_EQ(SessionErrorMessage(FailedPrecondition("no image")), "no image");
}

TEST(IsoUtcTest, FormatsUtcWithAndWithoutMilliseconds) {
  EXPECT_EQ(IsoUtc(0, true), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(IsoUtc(1796385600123, true), "2026-12-04T12:00:00.123Z");
  EXPECT_EQ(IsoUtc(1796385600123), "2026-12-04T12:00:00Z");
}

}  // namespace
}  // namespace airlock::sessions
