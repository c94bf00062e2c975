// Code mode's pre-started engines (LocalExecutor with a pool and prestart;
// Jail::StartBridged): an `execute` program handed to a waiting airlock-js or
// Python harness, its bridge already its fd 3, must behave exactly as a cold
// one — same frames over the bridge, same result, same output — and every
// containment case the Python harness can run holds in the pre-started jail
// too (the attacks run as code-mode programs: the harness is full CPython).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "jail/host.h"
#include "runtimes/bridge.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "selftest/containment_suite.h"
#include "selftest/host_bait.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

using Json = nlohmann::json;

// The server's side, in small: answers every "call" with its arguments
// doubled, records every frame.
class EchoBridge : public BridgeHandler {
 public:
  void OnFrame(std::string frame, ReplyFn reply) override {
    Json j = Json::parse(frame, nullptr, false);
    {
      std::lock_guard<std::mutex> lock(mu_);
      frames_.push_back(j);
    }
    if (j.value("op", "") == "call") {
      reply(Json{{"id", j["id"]}, {"ok", true}, {"result", {{"tool", j["name"]}, {"twice", j["args"]["n"].get<int>() * 2}}}}.dump());
    } else if (j.value("op", "") == "search" || j.value("op", "") == "describe") {
      reply(Json{{"id", j["id"]}, {"ok", false}, {"error", {{"code", "E_TOOL_NOT_FOUND"}, {"message", "none here"}}}}.dump());
    }
  }
  void OnBridgeError(const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    errors_.push_back(message);
  }
  std::vector<Json> frames() {
    std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  std::mutex mu_;
  std::vector<Json> frames_;
  std::vector<std::string> errors_;
};

std::vector<LanguageSpec> AllLanguages() {
  std::vector<LanguageSpec> languages = BuiltinLanguages();
  for (LanguageSpec& l : CodeModeLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js")) {
    languages.push_back(std::move(l));
  }
  return languages;
}

// Waits until the pool has made every jail it wants.
bool Settle(const JailPool& pool) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pool.stats().pending > 0) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class CodeModePrestartTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value();
    auto ex = LocalExecutor::Create(*host_, {}, AllLanguages());
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    executor_ = std::move(ex).value();
    if (executor_->Find(GetParam(), true) == nullptr) GTEST_SKIP() << "no code-mode " << GetParam();
  }

  RunResult Execute(const std::string& code, EchoBridge& bridge, uint64_t timeout_ms = 0) {
    RunRequest req;
    req.language = GetParam();
    req.code_mode = true;
    req.code = code;
    req.timeout_ms = timeout_ms;
    CancelToken cancel;
    return executor_->Run(req, nullptr, cancel, &bridge);
  }

  std::unique_ptr<jail::JailHost> host_;
  std::unique_ptr<LocalExecutor> executor_;
};

std::string CallsProgram(const std::string& language) {
  if (language == "javascript") {
    return "const a = await tools.call('t.echo', {n: 1});\n"
           "const b = await tools.call('t.echo', {n: 20});\n"
           "console.log('printed');\n"
           "return [a.twice, b.twice, typeof process, typeof require];";
  }
  return "import os, sys\n"
         "a = tools.call('t.echo', {'n': 1})\n"
         "b = tools.call('t.echo', {'n': 20})\n"
         "print('printed')\n"
         "result = [a['twice'], b['twice'], sorted(os.environ), sys.argv, os.getcwd()]\n";
}

TEST_P(CodeModePrestartTest, APreStartedEngineRunsTheProgramExactlyAsAColdOne) {
  executor_->EnablePool({.max_per_shape = 1, .min_per_shape = 1, .max_total = 8}, {});
  const std::string code = CallsProgram(GetParam());
  EchoBridge cold_bridge, warm_bridge;
  const uint64_t pre0 = executor_->prestarted_runs();
  RunResult cold = Execute(code, cold_bridge);
  ASSERT_EQ(cold.status, RunStatus::kOk) << cold.message << cold.stderr_text;
  EXPECT_EQ(executor_->prestarted_runs(), pre0) << "the first run must be cold (a pool miss)";
  ASSERT_TRUE(Settle(*executor_->pool()));
  RunResult warm = Execute(code, warm_bridge);
  ASSERT_EQ(warm.status, RunStatus::kOk) << warm.message << warm.stderr_text;
  EXPECT_EQ(executor_->prestarted_runs(), pre0 + 1) << "the second run must resume a pre-started engine";
  EXPECT_EQ(warm.stdout_text, cold.stdout_text);
  EXPECT_EQ(warm.stderr_text, cold.stderr_text);
  EXPECT_EQ(warm.exit_code, 0);
  // The same frames, in the same order: two calls, then the result.
  const std::vector<Json> a = cold_bridge.frames(), b = warm_bridge.frames();
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i], a[i]) << "frame " << i;
  EXPECT_EQ(b.back().value("op", ""), "result");
  EXPECT_EQ(b.back()["value"][0], 2);
  EXPECT_EQ(b.back()["value"][1], 40);
  EXPECT_TRUE(warm_bridge.errors().empty());
}

TEST_P(CodeModePrestartTest, ThePreStartedEngineGetsTheRunsDeadlineNotItsStartTime) {
  executor_->EnablePool({.max_per_shape = 1, .min_per_shape = 1, .max_total = 8}, {});
  EchoBridge first;
  ASSERT_EQ(Execute(GetParam() == "javascript" ? "return 1" : "result = 1", first).status, RunStatus::kOk);
  ASSERT_TRUE(Settle(*executor_->pool()));
  // The engine waited in the pool well past this run's timeout: the clock
  // must start at the hand-over, so a quick program still succeeds...
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EchoBridge quick;
  const uint64_t pre = executor_->prestarted_runs();
  RunResult ok = Execute(GetParam() == "javascript" ? "return 2" : "result = 2", quick, 500);
  EXPECT_EQ(executor_->prestarted_runs(), pre + 1);
  EXPECT_EQ(ok.status, RunStatus::kOk) << ok.message << ok.stderr_text;
  // ...and an endless one is stopped at its own deadline.
  ASSERT_TRUE(Settle(*executor_->pool()));
  EchoBridge slow;
  const auto t0 = std::chrono::steady_clock::now();
  RunResult loop = Execute(GetParam() == "javascript" ? "for (;;) {}" : "while True: pass", slow, 500);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(executor_->prestarted_runs(), pre + 2);
  if (GetParam() == "javascript") {
    // The engine's own deadline (from the hand-over) stops it first, with
    // exit 124 and a result_error the gateway turns into E_LIMIT_WALLCLOCK.
    EXPECT_EQ(loop.exit_code, 124) << RunStatusName(loop.status) << ": " << loop.message;
    const std::vector<Json> frames = slow.frames();
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.back().value("op", ""), "result_error") << frames.back().dump();
    EXPECT_EQ(frames.back()["error"].value("name", ""), "E_LIMIT_WALLCLOCK") << frames.back().dump();
  } else {
    EXPECT_EQ(loop.status, RunStatus::kTimeout) << loop.message;  // the jail's clock
  }
  EXPECT_GE(ms, 450);
  EXPECT_LT(ms, 5000);
}

TEST_P(CodeModePrestartTest, ABridgeIsNeverSharedBetweenRuns) {
  // Each pre-started engine has its own socketpair: a program that keeps
  // a call pending when it ends cannot reach the next run's bridge.
  executor_->EnablePool({.max_per_shape = 1, .min_per_shape = 1, .max_total = 8}, {});
  EchoBridge b1, b2, b3;
  const std::string code = CallsProgram(GetParam());
  ASSERT_EQ(Execute(code, b1).status, RunStatus::kOk);
  ASSERT_TRUE(Settle(*executor_->pool()));
  ASSERT_EQ(Execute(code, b2).status, RunStatus::kOk);
  ASSERT_TRUE(Settle(*executor_->pool()));
  ASSERT_EQ(Execute(code, b3).status, RunStatus::kOk);
  EXPECT_EQ(b1.frames().size(), 3u);
  EXPECT_EQ(b2.frames().size(), 3u);
  EXPECT_EQ(b3.frames().size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Engines, CodeModePrestartTest, ::testing::Values("javascript", "python"));

// The containment cases written in Python, run as code-mode programs through
// the pre-started harness (each case twice: the first registers its shape,
// the second must resume a pre-started harness and hold just the same).
class CodeModeExecutor : public CodeExecutor {
 public:
  explicit CodeModeExecutor(LocalExecutor& inner) : inner_(inner) {}
  RunResult Run(const RunRequest& request, const ProgressFn& progress, CancelToken& cancel,
                BridgeHandler* = nullptr) override {
    RunRequest cm = request;
    cm.code_mode = true;
    EchoBridge bridge;
    return inner_.Run(cm, progress, cancel, &bridge);
  }
  std::vector<LanguageInfo> Languages() override { return inner_.Languages(); }

 private:
  LocalExecutor& inner_;
};

class PrestartedCodeModeContainment : public ::testing::TestWithParam<selftest::SelftestCase> {
 protected:
  struct Env {
    std::unique_ptr<selftest::HostBait> bait;
    std::unique_ptr<jail::JailHost> host;
    std::unique_ptr<LocalExecutor> executor;
    std::unique_ptr<CodeModeExecutor> code_mode;
    std::string error;
  };
  static Env& Shared() {
    std::unique_ptr<Env>& env = Instance();
    if (env) return *env;
    env = [] {
      auto e = std::make_unique<Env>();
      auto bait = selftest::HostBait::Create();
      if (!bait.ok()) {
        e->error = bait.status().ToString();
        return e;
      }
      e->bait = std::move(bait).value();
      auto host = tests::CreateJailHost();
      if (!host.ok()) {
        e->error = host.status().ToString();
        return e;
      }
      e->host = std::move(host).value();
      auto ex = LocalExecutor::Create(*e->host, {}, AllLanguages());
      if (!ex.ok()) {
        e->error = ex.status().ToString();
        return e;
      }
      e->executor = std::move(ex).value();
      std::vector<uint64_t> shapes;
      for (const selftest::SelftestCase& c : selftest::ContainmentCases()) {
        if (c.memory_mb != 0 && std::find(shapes.begin(), shapes.end(), c.memory_mb) == shapes.end()) {
          shapes.push_back(c.memory_mb);
        }
      }
      e->executor->EnablePool({.max_per_shape = 1, .min_per_shape = 1, .max_total = 64, .extra_memory_mb = shapes}, {});
      e->code_mode = std::make_unique<CodeModeExecutor>(*e->executor);
      return e;
    }();
    return *env;
  }
  // The end of the run: code mode, executor and host go, then the bait
  // (its secret file and directory in /tmp, its environment variable).
  // Leaked before: every run of a case left /tmp/airlock-selftest-* behind.
 public:
  static void Destroy() { Instance().reset(); }

 private:
  static std::unique_ptr<Env>& Instance() {
    static std::unique_ptr<Env> env;
    return env;
  }
};

class PrestartedCodeModeCleanup : public ::testing::Environment {
 public:
  void TearDown() override { PrestartedCodeModeContainment::Destroy(); }
};
::testing::Environment* const kPrestartedCodeModeCleanup =
    ::testing::AddGlobalTestEnvironment(new PrestartedCodeModeCleanup);

std::vector<selftest::SelftestCase> PythonCases() {
  std::vector<selftest::SelftestCase> out;
  for (const selftest::SelftestCase& c : selftest::ContainmentCases()) {
    if (c.language == "python") out.push_back(c);
  }
  return out;
}

TEST_P(PrestartedCodeModeContainment, HoldsInAPreStartedCodeModeJail) {
  Env& env = Shared();
  ASSERT_TRUE(env.error.empty()) << env.error;
  const selftest::SelftestCase& c = GetParam();
  const selftest::CaseOutcome first = selftest::RunContainmentCase(*env.code_mode, c, *env.bait);
  if (first.skipped) GTEST_SKIP() << first.detail;
  EXPECT_TRUE(first.passed) << "first run: " << first.observed << ": " << first.detail;
  ASSERT_TRUE(Settle(*env.executor->pool()));
  const uint64_t pre = env.executor->prestarted_runs();
  const selftest::CaseOutcome warm = selftest::RunContainmentCase(*env.code_mode, c, *env.bait);
  EXPECT_GE(env.executor->prestarted_runs(), pre + 1) << "the second run did not resume a pre-started harness";
  EXPECT_TRUE(warm.passed) << c.name << " (" << c.description << ") pre-started in code mode: expected "
                           << warm.expected << ", observed " << warm.observed << ": " << warm.detail;
}

INSTANTIATE_TEST_SUITE_P(Python, PrestartedCodeModeContainment, ::testing::ValuesIn(PythonCases()),
                         [](const ::testing::TestParamInfo<selftest::SelftestCase>& info) { return info.param.name; });

}  // namespace
}  // namespace airlock::runtimes
