// The containment suite against pooled jails (runtimes/jail_pool.h): every
// escape attempt, limit and capability case runs in a jail that was created
// ahead of time and waited in the pool, and must hold exactly as in a cold
// jail. Each case runs twice: the first run registers its jail shape (and is
// judged like any run), the second must be served from the pool (a pool hit
// is asserted) and is judged again. Afterwards, destroying the executor must
// leave no process, mount or cgroup behind, ready jails included.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "jail/host.h"
#include "runtimes/local_executor.h"
#include "selftest/containment_suite.h"
#include "selftest/host_bait.h"
#include "selftest/host_snapshot.h"
#include "containment_env.h"
#include "test_jail_host.h"

namespace airlock::selftest {
namespace {

// The memory limits the cases ask for: configured pool shapes (config
// pool.memory_mb), as an operator would list them.
std::vector<uint64_t> CaseMemoryShapes() {
  std::vector<uint64_t> shapes;
  for (const SelftestCase& c : ContainmentCases()) {
    if (c.memory_mb != 0 && std::find(shapes.begin(), shapes.end(), c.memory_mb) == shapes.end()) {
      shapes.push_back(c.memory_mb);
    }
  }
  return shapes;
}

// Every shape keeps one ready jail once used.
ContainmentEnv& PooledEnv() {
  static ContainmentEnv env(runtimes::JailPoolOptions{
      .max_per_shape = 1, .min_per_shape = 1, .max_total = 64, .extra_memory_mb = CaseMemoryShapes()});
  return env;
}

// Waits until the pool has created `n` jails in all (the refill after a run)
// and has settled (no jail wanted or being made).
bool WaitCreated(const runtimes::JailPool& pool, uint64_t n) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.stats().created < n || pool.stats().pending > 0) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class PooledContainmentTest : public ::testing::TestWithParam<SelftestCase> {};

TEST_P(PooledContainmentTest, HoldsInAPooledJail) {
  ContainmentEnv& env = PooledEnv();
  ASSERT_TRUE(env.error().empty()) << env.error();
  const runtimes::JailPool& pool = *env.executor()->pool();
  const SelftestCase& c = GetParam();

  const uint64_t created_before = pool.stats().created;
  const CaseOutcome first = RunContainmentCase(*env.executor(), c, *env.bait());
  if (first.skipped) GTEST_SKIP() << first.detail;
  EXPECT_TRUE(first.passed) << "first run: " << first.observed << ": " << first.detail;

  // The shape is registered now; its jail is built in the background.
  ASSERT_TRUE(WaitCreated(pool, created_before + 1)) << "the pool did not refill";
  const uint64_t hits_before = pool.stats().hits;
  const uint64_t prestarted_before = env.executor()->prestarted_runs();
  const CaseOutcome pooled = RunContainmentCase(*env.executor(), c, *env.bait());
  // Cases with a follow-up run (a python `print(1)` afterwards) may take a
  // second pooled jail for it.
  const bool follow_up = std::find(c.expect.host_checks.begin(), c.expect.host_checks.end(),
                                   HostCheck::kFollowUpRunWorks) != c.expect.host_checks.end();
  EXPECT_GE(pool.stats().hits, hits_before + 1) << "the second run was not served from the pool";
  // A compiled language with a pre-started interpreter (TypeScript) also
  // takes a plain jail of its shape for the compiler.
  const runtimes::LanguageSpec* lang = env.executor()->Find(c.language);
  const bool compile_jail = lang != nullptr && lang->compile && !lang->prestart_argv.empty();
  EXPECT_LE(pool.stats().hits, hits_before + (follow_up ? 2 : 1) + (compile_jail ? 1 : 0));
  // Interpreted native-tier languages run in a pre-started interpreter.
  const runtimes::LanguageSpec* spec = env.executor()->Find(c.language);
  if (spec != nullptr && !spec->prestart_argv.empty()) {
    EXPECT_GE(env.executor()->prestarted_runs(), prestarted_before + 1)
        << "the second run did not resume a pre-started interpreter";
  }
  EXPECT_TRUE(pooled.passed) << c.name << " (" << c.description << ") in a pooled jail: expected " << pooled.expected
                             << ", observed " << pooled.observed << ": " << pooled.detail;
}

INSTANTIATE_TEST_SUITE_P(Pooled, PooledContainmentTest, ::testing::ValuesIn(ContainmentCases()),
                         [](const ::testing::TestParamInfo<SelftestCase>& info) { return info.param.name; });

TEST(JailPoolLifecycleTest, ReadyJailsAreDestroyedWithThePoolAndNothingIsLeftBehind) {
  const HostSnapshot before = TakeHostSnapshot();
  auto host = tests::CreateJailHost();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  {
    auto executor = runtimes::LocalExecutor::Create(**host);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    (*executor)->EnablePool({.max_per_shape = 3, .min_per_shape = 3, .max_total = 8}, {"python", "bash"});
    ASSERT_TRUE(WaitCreated(*(*executor)->pool(), 6));
    EXPECT_EQ((*executor)->pool()->stats().ready, 6u);
    EXPECT_FALSE(LeftBehind(before, TakeHostSnapshot()).empty()) << "six ready jails must be visible (cgroups)";

    // A run takes a ready jail, the pool refills it, and the run's jail is gone afterwards.
    runtimes::RunRequest req;
    req.language = "python";
    req.code = "print(40 + 2)";
    CancelToken cancel;
    runtimes::RunResult r = (*executor)->Run(req, nullptr, cancel);
    EXPECT_EQ(r.status, runtimes::RunStatus::kOk) << r.message << r.stderr_text;
    EXPECT_EQ(r.stdout_text, "42\n");
    EXPECT_EQ((*executor)->pool()->stats().hits, 1u);
    ASSERT_TRUE(WaitCreated(*(*executor)->pool(), 7));
  }
  host->reset();
  const std::vector<std::string> left = AwaitNothingLeftBehind(before);
  EXPECT_TRUE(left.empty()) << left.front();
}

TEST(JailPoolLifecycleTest, SizesItselfToDemandAndDrainsToZeroWhenIdle) {
  auto host = tests::CreateJailHost();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  runtimes::JailPool pool(**host, {.max_per_shape = 2, .min_per_shape = 0, .max_total = 4,
                                   .idle_after = std::chrono::milliseconds(300)});
  jail::JailConfig config;
  EXPECT_EQ(pool.Take("k", config), nullptr);  // nothing warm yet: a miss raises the target to 1
  EXPECT_EQ(pool.Take("k", config), nullptr);  // a second miss: 2 (the maximum)
  EXPECT_EQ(pool.Take("k", config), nullptr);
  ASSERT_TRUE(WaitCreated(pool, 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pool.stats().ready, 2u) << "never more than max_per_shape";
  std::unique_ptr<jail::Jail> j = pool.Take("k", config);
  ASSERT_NE(j, nullptr);
  EXPECT_TRUE(j->alive());
  j.reset();
  // Idle: the target falls by one per idle period, down to zero.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (pool.stats().ready > 0 && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(pool.stats().ready, 0u);
  EXPECT_EQ(pool.stats().misses, 3u);
  EXPECT_EQ(pool.stats().hits, 1u);
}

// Quiet refills (jail_pool.h): while a run is in flight the refill waits for
// it to end, up to refill_defer, so making a jail does not slow the run.
class RefillDeferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(*host);
  }
  std::unique_ptr<runtimes::JailPool> MakePool(std::chrono::milliseconds defer) {
    auto pool = std::make_unique<runtimes::JailPool>(
        *host_, runtimes::JailPoolOptions{.max_per_shape = 1, .min_per_shape = 1, .max_total = 2, .refill_defer = defer});
    pool->Warm("k", config_);
    return pool;
  }
  std::unique_ptr<jail::JailHost> host_;
  jail::JailConfig config_;
};

TEST_F(RefillDeferTest, ARefillWaitsForTheRunInFlightAndGoesWhenItEnds) {
  std::unique_ptr<runtimes::JailPool> pool = MakePool(std::chrono::seconds(60));
  ASSERT_TRUE(WaitCreated(*pool, 1)) << "no run in flight: the warm jail is made at once";
  {
    const runtimes::JailPool::ActiveRun run(pool.get());
    std::unique_ptr<jail::Jail> j = pool->Take("k", config_);
    ASSERT_NE(j, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    EXPECT_EQ(pool->stats().created, 1u) << "a jail was made while the run was in flight";
    EXPECT_EQ(pool->stats().ready, 0u);
  }
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitCreated(*pool, 2)) << "the refill did not go when the run ended";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(9));
  EXPECT_EQ(pool->stats().ready, 1u);
}

TEST_F(RefillDeferTest, UnderSustainedLoadTheRefillGoesAfterRefillDefer) {
  std::unique_ptr<runtimes::JailPool> pool = MakePool(std::chrono::milliseconds(300));
  ASSERT_TRUE(WaitCreated(*pool, 1));
  const runtimes::JailPool::ActiveRun run(pool.get());  // in flight throughout
  const auto taken = std::chrono::steady_clock::now();
  ASSERT_NE(pool->Take("k", config_), nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(pool->stats().created, 1u) << "refilled before refill_defer passed";
  ASSERT_TRUE(WaitCreated(*pool, 2)) << "a pool under sustained load must still refill";
  EXPECT_GE(std::chrono::steady_clock::now() - taken, std::chrono::milliseconds(300));
}

TEST_F(RefillDeferTest, ZeroRefillsAtOnceAndNoPoolIsNothingToMark) {
  std::unique_ptr<runtimes::JailPool> pool = MakePool(std::chrono::milliseconds(0));
  ASSERT_TRUE(WaitCreated(*pool, 1));
  const runtimes::JailPool::ActiveRun run(pool.get());
  const runtimes::JailPool::ActiveRun unpooled(nullptr);
  ASSERT_NE(pool->Take("k", config_), nullptr);
  ASSERT_TRUE(WaitCreated(*pool, 2)) << "refill_defer 0 must not wait for the run";
}

}  // namespace
}  // namespace airlock::selftest
