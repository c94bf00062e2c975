// The server's book of sessions (sessions/session_registry.h): ownership,
// per-caller and total limits, idle and lifetime expiry, lost sessions
// (including a runner that restarted), and the audit events; against a fake
// executor that records what it was asked.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <string>

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
    return open.erase(id) ? OkStatus() : NotFound("no such session");
  }
  std::mutex mu;
  std::set<std::string> open;
  runtimes::SessionSpec last_spec;
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

TEST(IsoUtcTest, FormatsUtcWithAndWithoutMilliseconds) {
  EXPECT_EQ(IsoUtc(0, true), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(IsoUtc(1796385600123, true), "2026-12-04T12:00:00.123Z");
  EXPECT_EQ(IsoUtc(1796385600123), "2026-12-04T12:00:00Z");
}

}  // namespace
}  // namespace airlock::sessions
