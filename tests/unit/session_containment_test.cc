// The containment suite through sessions: every case of a language that has
// sessions runs as cells of one session (the jail and interpreter that stay
// alive between calls), twice: the first cell runs the attack, the second
// runs it again in the same session, with whatever the first left behind
// (files, variables, a background process the call end must have killed).
// Both must hold as in a fresh jail; the second one's verdict is judged.
// Languages without sessions (compiled ones) run as ordinary runs, so the
// whole suite stays in one place. Split attacks that only make sense across
// calls have tests of their own below.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "runtimes/local_executor.h"
#include "selftest/containment_suite.h"
#include "selftest/host_bait.h"
#include "selftest/host_snapshot.h"
#include "containment_env.h"

namespace airlock::selftest {
namespace {

// The bridge of a code-mode session's cells in the containment runs: the
// attack programs do not use it; any frame they send is answered with an
// error, as the gateway answers an undeclared tool.
class RefusingBridge : public runtimes::BridgeHandler {
 public:
  void OnFrame(std::string frame, ReplyFn reply) override {
    const nlohmann::json j = nlohmann::json::parse(frame, nullptr, false);
    if (j.is_object() && j.contains("id")) {
      reply(nlohmann::json{{"id", j["id"]}, {"ok", false},
                           {"error", {{"code", "E_TOOL_NOT_DECLARED"}, {"message", "no tools here"}}}}
                .dump());
    }
  }
};

// What happens to the session between the two cells: nothing, a pause
// (the jail destroyed, the state on disk; the second cell restores it into
// a new jail), or a fork (the second cell runs in the copy).
enum class Between { kNothing, kPauseResume, kFork };

// Runs each request as cells of a fresh session (when its language has
// sessions): the program twice, then closes the session. `code_mode`: the
// sessions are code-mode sessions (Python), each cell with a bridge of its
// own (RefusingBridge). `between`: what the session goes through between
// the cells.
class SessionCellExecutor : public runtimes::CodeExecutor {
 public:
  explicit SessionCellExecutor(runtimes::LocalExecutor& inner, bool code_mode = false,
                               Between between = Between::kNothing)
      : inner_(inner), code_mode_(code_mode), between_(between) {}

  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                          CancelToken& cancel, runtimes::BridgeHandler* bridge) override {
    const runtimes::LanguageSpec* spec =
        code_mode_ ? inner_.FindCodeMode(request.language) : inner_.Find(request.language, false, request.isolation);
    if (spec == nullptr || spec->session_argv.empty() || !request.args.empty() || request.code_mode ||
        (!spec->session_stdin && !request.stdin_data.empty())) {
      return inner_.Run(request, progress, cancel, bridge);
    }
    const std::string id = "s_containment_" + std::to_string(next_++);
    Status st = inner_.OpenSession({.id = id, .language = request.language, .isolation = request.isolation,
                                    .memory_mb = request.memory_mb, .cpu_budget_ms = 120'000,
                                    .code_mode = code_mode_});
    if (!st.ok()) return runtimes::InternalErrorResult(request.language, "jail_setup_failed", st.message());
    ++sessions_;
    runtimes::RunRequest cell = request;
    cell.session_id = id;
    cell.memory_mb = 0;
    cell.code_mode = code_mode_;
    RefusingBridge refusing;
    runtimes::RunResult first = inner_.Run(cell, progress, cancel, &refusing);
    runtimes::RunResult result = first;
    std::string fork_id;
    if (first.error_code != "E_SESSION_LOST" && between_ != Between::kNothing) {
      if (between_ == Between::kPauseResume) {
        Status paused = inner_.PauseSession(id);
        if (!paused.ok()) return runtimes::InternalErrorResult(request.language, "internal", paused.ToString());
      } else {
        fork_id = id + "_fork";
        runtimes::SessionSpec copy{.id = fork_id, .language = request.language, .isolation = request.isolation,
                                   .memory_mb = request.memory_mb, .cpu_budget_ms = 120'000};
        Status forked = inner_.ForkSession(id, copy);
        if (!forked.ok()) return runtimes::InternalErrorResult(request.language, "internal", forked.ToString());
        // The source goes away: what the second cell meets is the copy alone.
        (void)inner_.CloseSession(id);
        cell.session_id = fork_id;
      }
      ++checkpoints_;
    }
    if (first.error_code != "E_SESSION_LOST" && !RunOnce(request)) {
      // The same program again, in what the first left behind. JavaScript's
      // top-level const/let may not be declared twice in one context: the
      // second runs in a block of its own.
      if (request.language == "javascript") cell.code = "{\n" + request.code + "\n}";
      result = inner_.Run(cell, progress, cancel, &refusing);
      ++second_cells_;
    }
    (void)inner_.CloseSession(id);
    if (!fork_id.empty()) (void)inner_.CloseSession(fork_id);
    // A lost session reports the limit that ended it: judge the run by it.
    if (result.error_code == "E_SESSION_LOST") result.error_code.clear();
    return result;
  }
  std::vector<runtimes::LanguageInfo> Languages() override { return inner_.Languages(); }

  // Programs that cannot run twice in one place (they create fixed names).
  static bool RunOnce(const runtimes::RunRequest& request) {
    return request.code.find("os.symlink(") != std::string::npos;
  }

  int sessions() const { return sessions_; }
  int second_cells() const { return second_cells_; }
  int checkpoints() const { return checkpoints_; }

 private:
  runtimes::LocalExecutor& inner_;
  const bool code_mode_;
  const Between between_;
  std::atomic<int> next_{0}, sessions_{0}, second_cells_{0}, checkpoints_{0};
};

// With the WASM tier's languages: its cases run in WASM-tier sessions.
ContainmentEnv& Env() {
  static ContainmentEnv env(std::nullopt, /*wasm_tier=*/true);
  return env;
}

// Attack programs that only make sense as a script file (they read their
// own path or are a whole PHP file with markup): run as ordinary runs.
bool ScriptOnly(const SelftestCase& c) {
  return c.language == "php" || c.attack_file.find("argv") != std::string::npos;
}

class SessionContainmentTest : public ::testing::TestWithParam<SelftestCase> {};

TEST_P(SessionContainmentTest, HoldsAcrossCallsOfOneSession) {
  ContainmentEnv& env = Env();
  ASSERT_TRUE(env.error().empty()) << env.error();
  const SelftestCase& c = GetParam();
  SessionCellExecutor sessions(*env.executor());
  runtimes::CodeExecutor& executor = ScriptOnly(c) ? static_cast<runtimes::CodeExecutor&>(*env.executor())
                                                   : static_cast<runtimes::CodeExecutor&>(sessions);
  const CaseOutcome outcome = RunContainmentCase(executor, c, *env.bait());
  if (outcome.skipped) GTEST_SKIP() << outcome.detail;
  EXPECT_TRUE(outcome.passed) << c.name << " (" << c.description << ") in a session: expected " << outcome.expected
                              << ", observed " << outcome.observed << ": " << outcome.detail;
  const runtimes::LanguageSpec* spec =
      env.executor()->Find(c.language, false, c.isolation.empty() ? "native" : c.isolation);
  if (!ScriptOnly(c) && spec != nullptr && !spec->session_argv.empty() && c.stdin_data.empty()) {
    EXPECT_GE(sessions.sessions(), 1) << "the case did not run in a session";
  }
}

INSTANTIATE_TEST_SUITE_P(Sessions, SessionContainmentTest, ::testing::ValuesIn(ContainmentCases()),
                         [](const ::testing::TestParamInfo<SelftestCase>& info) { return info.param.name; });
// The WASM tier's cases: Python's in WASM-tier sessions (the engine's
// control channel), the others as ordinary runs.
INSTANTIATE_TEST_SUITE_P(WasmTierSessions, SessionContainmentTest, ::testing::ValuesIn(WasmTierContainmentCases()),
                         [](const ::testing::TestParamInfo<SelftestCase>& info) { return info.param.name; });

// The WASM tier's Python cases in sessions that are paused between their
// two cells (the second restores the image into a new jail) or forked (the
// second runs in the copy): a restored or forked session must hold as a
// fresh one does.
std::vector<SelftestCase> CheckpointCases() {
  std::vector<SelftestCase> out;
  for (const SelftestCase& c : WasmTierContainmentCases()) {
    if (c.language == "python" && !ScriptOnly(c) && c.stdin_data.empty()) out.push_back(c);
  }
  return out;
}

class CheckpointContainmentTest : public ::testing::TestWithParam<SelftestCase> {
 protected:
  void Check(Between between, const char* what) {
    ContainmentEnv& env = Env();
    ASSERT_TRUE(env.error().empty()) << env.error();
    const SelftestCase& c = GetParam();
    SessionCellExecutor sessions(*env.executor(), /*code_mode=*/false, between);
    const CaseOutcome outcome = RunContainmentCase(sessions, c, *env.bait());
    if (outcome.skipped) GTEST_SKIP() << outcome.detail;
    EXPECT_TRUE(outcome.passed) << c.name << " (" << c.description << ") in a " << what << " session: expected "
                                << outcome.expected << ", observed " << outcome.observed << ": " << outcome.detail;
    EXPECT_GE(sessions.sessions(), 1) << "the case did not run in a session";
    if (sessions.second_cells() > 0) EXPECT_GE(sessions.checkpoints(), 1) << "the session was not " << what;
  }
};

TEST_P(CheckpointContainmentTest, HoldsInARestoredSession) { Check(Between::kPauseResume, "restored"); }

TEST_P(CheckpointContainmentTest, HoldsInAForkedSession) { Check(Between::kFork, "forked"); }

INSTANTIATE_TEST_SUITE_P(WasmTierCheckpoints, CheckpointContainmentTest, ::testing::ValuesIn(CheckpointCases()),
                         [](const ::testing::TestParamInfo<SelftestCase>& info) { return info.param.name; });

// The native Python cases as cells of code-mode sessions (open_session
// mode "codemode"): the session harness with the code-mode hooks, a bridge
// passed with every cell.
std::vector<SelftestCase> CodeModeSessionCases() {
  std::vector<SelftestCase> out;
  for (const SelftestCase& c : ContainmentCases()) {
    if (c.language == "python" && (c.isolation.empty() || c.isolation == "native") && !ScriptOnly(c) &&
        c.stdin_data.empty()) {
      out.push_back(c);
    }
  }
  // JavaScript's code-mode sessions are the embedded engine's: the WASM
  // tier's JavaScript cases (the same engine, with `tools`).
  for (const SelftestCase& c : WasmTierContainmentCases()) {
    if (c.language == "javascript" && !ScriptOnly(c) && c.stdin_data.empty()) out.push_back(c);
  }
  return out;
}

class CodeModeSessionContainmentTest : public ::testing::TestWithParam<SelftestCase> {};

TEST_P(CodeModeSessionContainmentTest, HoldsAcrossCellsOfACodeModeSession) {
  ContainmentEnv& env = Env();
  ASSERT_TRUE(env.error().empty()) << env.error();
  const SelftestCase& c = GetParam();
  SessionCellExecutor sessions(*env.executor(), /*code_mode=*/true);
  const CaseOutcome outcome = RunContainmentCase(sessions, c, *env.bait());
  if (outcome.skipped) GTEST_SKIP() << outcome.detail;
  EXPECT_TRUE(outcome.passed) << c.name << " (" << c.description << ") in a code-mode session: expected "
                              << outcome.expected << ", observed " << outcome.observed << ": " << outcome.detail;
  EXPECT_GE(sessions.sessions(), 1) << "the case did not run in a code-mode session";
}

INSTANTIATE_TEST_SUITE_P(CodeModeSessions, CodeModeSessionContainmentTest, ::testing::ValuesIn(CodeModeSessionCases()),
                         [](const ::testing::TestParamInfo<SelftestCase>& info) { return info.param.name; });

// Attacks split across calls.
class SplitAttackTest : public ::testing::Test {
 protected:
  runtimes::RunResult Cell(const std::string& id, const std::string& code, uint64_t timeout_ms = 10'000) {
    runtimes::RunRequest r;
    r.session_id = id;
    r.code = code;
    r.timeout_ms = timeout_ms;
    CancelToken cancel;
    return Env().executor()->Run(r, nullptr, cancel);
  }
  std::string Open(const std::string& language, uint64_t memory_mb = 0) {
    const std::string id = "s_split_" + std::to_string(n_++);
    Status st = Env().executor()->OpenSession({.id = id, .language = language, .memory_mb = memory_mb});
    EXPECT_TRUE(st.ok()) << st.ToString();
    return id;
  }
  static inline int n_ = 0;
};

TEST_F(SplitAttackTest, DiskFillAcrossCallsHitsTheSessionsQuota) {
  const std::string id = Open("python");
  // 24 MiB a call into the session's one 64 MiB /work: the third call must
  // fail to write, though each call alone stays under the quota.
  int denied_at = -1;
  for (int i = 0; i < 5 && denied_at < 0; ++i) {
    runtimes::RunResult r = Cell(id, "try:\n    open('fill" + std::to_string(i) +
                                         "', 'wb').write(b'x' * (24 << 20))\n    print('wrote')\n"
                                         "except OSError as e:\n    print('DENIED', e.errno)\n");
    if (r.stdout_text.rfind("DENIED", 0) == 0 || r.status != runtimes::RunStatus::kOk) denied_at = i;
  }
  EXPECT_EQ(denied_at, 2) << "the disk quota does not hold across the calls of a session";
  EXPECT_TRUE(Env().executor()->CloseSession(id).ok());
}

TEST_F(SplitAttackTest, AProcessPlantedInOneCallIsGoneInTheNext) {
  const std::string id = Open("python");
  runtimes::RunResult plant = Cell(id,
                                   "import subprocess\np = subprocess.Popen(['/bin/sleep', '4711'])\n"
                                   "pid = p.pid\nprint('STARTED', pid)");
  ASSERT_EQ(plant.status, runtimes::RunStatus::kOk) << plant.message << plant.stderr_text;
  runtimes::RunResult look = Cell(id, "import os\nprint('ALIVE' if os.path.exists(f'/proc/{pid}/cmdline') and "
                                      "b'4711' in open(f'/proc/{pid}/cmdline','rb').read() else 'DENIED')");
  EXPECT_EQ(look.stdout_text, "DENIED\n") << look.stderr_text;
  EXPECT_TRUE(Env().executor()->CloseSession(id).ok());
}

TEST_F(SplitAttackTest, ForkBombAcrossCallsIsBoundedByTheSessionsPidLimit) {
  const std::string id = Open("python");
  // Each call leaves threads behind in the interpreter (threads are state,
  // not processes): together they still cannot pass the session's pids limit.
  int failed_at = -1;
  for (int i = 0; i < 10 && failed_at < 0; ++i) {
    runtimes::RunResult r = Cell(id,
                                 "import threading, time\nts = globals().setdefault('ts', [])\n"
                                 "try:\n    for _ in range(16):\n        t = threading.Thread(target=time.sleep, args=(3600,), daemon=True)\n"
                                 "        t.start(); ts.append(t)\n    print('threads', len(ts))\n"
                                 "except RuntimeError as e:\n    print('DENIED', len(ts))\n");
    if (r.stdout_text.rfind("DENIED", 0) == 0 || r.status != runtimes::RunStatus::kOk) failed_at = i;
  }
  EXPECT_GE(failed_at, 0) << "160 threads fit into a session whose pids limit is 64";
  EXPECT_TRUE(Env().executor()->CloseSession(id).ok());
}

TEST(SessionLifecycleTest, NothingIsLeftBehindAfterClosingOrDestroying) {
  const HostSnapshot before = TakeHostSnapshot();
  auto host = tests::CreateJailHost();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  {
    auto executor = runtimes::LocalExecutor::Create(**host);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    ASSERT_TRUE((*executor)->OpenSession({.id = "s_a", .language = "python"}).ok());
    ASSERT_TRUE((*executor)->OpenSession({.id = "s_b", .language = "bash"}).ok());
    EXPECT_FALSE(LeftBehind(before, TakeHostSnapshot()).empty()) << "two open sessions must be visible";
    EXPECT_TRUE((*executor)->CloseSession("s_a").ok());
    // s_b is still open when the executor goes.
  }
  host->reset();
  const std::vector<std::string> left = AwaitNothingLeftBehind(before);
  EXPECT_TRUE(left.empty()) << left.front();
}

}  // namespace
}  // namespace airlock::selftest
