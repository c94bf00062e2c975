// Sessions in the executor (runtimes/sandbox_session.h, LocalExecutor's
// OpenSession/CloseSession and session runs): state persists across cells
// for every session language, each session is its own jail, and every way a
// cell can end the interpreter loses the session with a clear error and
// leaves nothing behind. Native sessions refuse to pause or fork and go on.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jail/host.h"
#include "runtimes/local_executor.h"
#include "selftest/host_snapshot.h"
#include "session_test_util.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

// Waits (bounded) until no host process has `needle` in its command line.
bool NoProcessWith(const std::string& needle) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!selftest::ProcessesWithCmdline(needle).empty()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class SessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value().release();
    auto ex = LocalExecutor::Create(*host_, {});
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    executor_ = std::move(ex).value().release();
  }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
    delete host_;
    host_ = nullptr;
  }

  std::string Open(const std::string& language, uint64_t memory_mb = 0) {
    return sessiontest::OpenTestSession(*executor_, "test", language, "native", memory_mb);
  }

  RunResult Cell(const std::string& id, const std::string& code, uint64_t timeout_ms = 10'000,
                 std::vector<InputFile> files = {}, std::vector<std::string> globs = {}, std::string stdin_data = "") {
    return sessiontest::RunCell(*executor_, id, code, timeout_ms, std::move(files), std::move(globs),
                            std::move(stdin_data));
  }

  static jail::JailHost* host_;
  static LocalExecutor* executor_;
};

jail::JailHost* SessionTest::host_ = nullptr;
LocalExecutor* SessionTest::executor_ = nullptr;

struct LanguageCase {
  std::string language;
  std::string set;     // defines state and writes note.txt
  std::string get;     // prints the state and note.txt
  std::string expect;  // in get's stdout
};

class SessionLanguageTest : public SessionTest, public ::testing::WithParamInterface<LanguageCase> {};

TEST_P(SessionLanguageTest, StateAndFilesPersistAcrossCells) {
  const LanguageCase& c = GetParam();
  if (executor_->Find(c.language) == nullptr) GTEST_SKIP() << c.language << " is not installed";
  const std::string id = Open(c.language);
  RunResult set = Cell(id, c.set);
  ASSERT_EQ(set.status, RunStatus::kOk) << set.message << "\n" << set.stderr_text;
  RunResult get = Cell(id, c.get);
  ASSERT_EQ(get.status, RunStatus::kOk) << get.message << "\n" << get.stderr_text;
  EXPECT_NE(get.stdout_text.find(c.expect), std::string::npos) << get.stdout_text;
  EXPECT_EQ(get.stdout_text.find("airlock-turn-end"), std::string::npos) << "the end marker leaked";
  // A second session sees none of it.
  const std::string other = Open(c.language);
  RunResult fresh = Cell(other, c.get);
  EXPECT_EQ(fresh.stdout_text.find(c.expect), std::string::npos) << fresh.stdout_text;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
  EXPECT_TRUE(executor_->CloseSession(other).ok());
  RunResult gone = Cell(id, c.get);
  EXPECT_EQ(gone.error_code, "E_SESSION_NOT_FOUND");
}

INSTANTIATE_TEST_SUITE_P(
    Languages, SessionLanguageTest,
    ::testing::Values(
        LanguageCase{"python", "import math\nx = 41\ndef f(v):\n    return v + 1\nopen('note.txt','w').write('noted')",
                     "print(f(x), math.pi > 3, open('note.txt').read())", "42 True noted"},
        LanguageCase{"javascript",
                     "var x = 41; let y = 1; function f(v) { return v + y; }\nrequire('fs').writeFileSync('note.txt', 'noted');",
                     "console.log(f(x), require('fs').readFileSync('note.txt', 'utf8'))", "42 noted"},
        LanguageCase{"ruby", "x = 41\ndef f(v) = v + 1\nFile.write('note.txt', 'noted')",
                     "puts \"#{f(x)} #{File.read('note.txt')}\"", "42 noted"},
        LanguageCase{"php", "$x = 41; function f($v) { return $v + 1; } file_put_contents('note.txt', 'noted');",
                     "echo f($x), ' ', file_get_contents('note.txt'), \"\\n\";", "42 noted"},
        LanguageCase{"bash", "x=41; f() { echo $(( $1 + 1 )); }; mkdir -p sub && cd sub && echo noted > note.txt",
                     "echo \"$(f $x) $(cat note.txt) $PWD\"", "42 noted /work/sub"}),
    [](const ::testing::TestParamInfo<LanguageCase>& info) { return info.param.language; });

TEST_F(SessionTest, PythonShowsTheLastExpressionAndSurvivesExceptions) {
  const std::string id = Open("python");
  RunResult r = Cell(id, "x = 41\nx + 1");
  EXPECT_EQ(r.status, RunStatus::kOk);
  EXPECT_EQ(r.stdout_text, "42\n");
  RunResult none = Cell(id, "None");
  EXPECT_EQ(none.stdout_text, "");
  RunResult err = Cell(id, "1/0");
  EXPECT_EQ(err.status, RunStatus::kExitNonzero);
  EXPECT_EQ(err.exit_code, 1);
  EXPECT_NE(err.stderr_text.find("ZeroDivisionError"), std::string::npos) << err.stderr_text;
  EXPECT_NE(err.stderr_text.find("<cell 3>"), std::string::npos) << err.stderr_text;
  EXPECT_EQ(err.stderr_text.find("_airlock_session"), std::string::npos) << "the harness frame shows";
  RunResult bad = Cell(id, "def (:");
  EXPECT_EQ(bad.status, RunStatus::kExitNonzero);
  EXPECT_NE(bad.stderr_text.find("SyntaxError"), std::string::npos);
  RunResult exit = Cell(id, "import sys\nsys.exit(3)");
  EXPECT_EQ(exit.status, RunStatus::kExitNonzero);
  EXPECT_EQ(exit.exit_code, 3);
  RunResult still = Cell(id, "print(x, _)");
  EXPECT_EQ(still.status, RunStatus::kOk) << still.message;
  EXPECT_EQ(still.stdout_text, "41 42\n");
  RunResult awaited = Cell(id, "import asyncio\nawait asyncio.sleep(0)\n'done'");
  EXPECT_EQ(awaited.stdout_text, "'done'\n") << awaited.stderr_text;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, StdinFilesAndOutputFilesArePerCall) {
  const std::string id = Open("python");
  RunResult a = Cell(id, "import sys\nprint(sys.stdin.read().upper())", 10'000, {{"in.csv", "a,b\n1,2\n"}}, {}, "hi");
  EXPECT_EQ(a.stdout_text, "HI\n");
  RunResult b = Cell(id, "import sys\nprint(repr(sys.stdin.read()), open('in.csv').read().count(','))\n"
                         "_ = open('out.txt','w').write('o')", 10'000, {}, {"*.txt"});
  EXPECT_EQ(b.stdout_text, "'' 2\n") << b.stderr_text;
  ASSERT_EQ(b.files.size(), 1u);
  EXPECT_EQ(b.files[0].name, "out.txt");
  EXPECT_EQ(b.files[0].content, "o");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, ATimeoutLosesTheSessionForGood) {
  const std::string id = Open("python");
  ASSERT_EQ(Cell(id, "x = 1").status, RunStatus::kOk);
  RunResult t = Cell(id, "while True: pass", 500);
  EXPECT_EQ(t.status, RunStatus::kTimeout);
  EXPECT_EQ(t.error_code, "E_SESSION_LOST");
  EXPECT_NE(t.message.find("time limit"), std::string::npos) << t.message;
  RunResult after = Cell(id, "print(x)");
  EXPECT_EQ(after.status, RunStatus::kInternalError);
  EXPECT_EQ(after.error_code, "E_SESSION_LOST");
  EXPECT_NE(after.message.find("time limit"), std::string::npos) << after.message;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, MemoryHoldsAcrossCallsAndItsBreachLosesTheSession) {
  const std::string id = Open("python", 128);
  // 50 MiB a cell: the third or fourth breaks the session's 128 MiB.
  RunResult r;
  int cells = 0;
  for (; cells < 6; ++cells) {
    r = Cell(id, "blocks = globals().setdefault('blocks', [])\nblocks.append(bytearray(b'x' * (50 << 20)))");
    if (r.status != RunStatus::kOk) break;
  }
  EXPECT_GE(cells, 1);
  EXPECT_LE(cells, 3) << "the memory limit did not hold across calls";
  EXPECT_TRUE(r.status == RunStatus::kMemoryLimit || r.error_code == "E_SESSION_LOST") << r.message;
  if (r.error_code == "E_SESSION_LOST") {
    EXPECT_NE(r.message.find("memory"), std::string::npos) << r.message;
  }
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, BackgroundProcessesDieWhenTheCallEnds) {
  const std::string id = Open("bash");
  RunResult r = Cell(id, "sleep 4242 & sleep 4243 & disown; echo started");
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_TRUE(NoProcessWith("sleep 4242"));
  EXPECT_TRUE(NoProcessWith("sleep 4243"));
  RunResult next = Cell(id, "echo alive");
  EXPECT_EQ(next.stdout_text, "alive\n");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

// Frozen while idle (sandbox_session.h): a thread a cell started ticks
// while a cell runs, and not at all between calls.
TEST_F(SessionTest, ABackgroundThreadMakesNoProgressWhileIdle) {
  const std::string id = Open("python");
  RunResult start = Cell(id,
                         "import threading, time\n"
                         "ticks = 0\n"
                         "def _tick():\n"
                         "    global ticks\n"
                         "    while True:\n"
                         "        ticks += 1\n"
                         "        time.sleep(0.005)\n"
                         "threading.Thread(target=_tick, daemon=True).start()\n"
                         "time.sleep(0.2)\n"
                         "print(ticks)");
  ASSERT_EQ(start.status, RunStatus::kOk) << start.message << start.stderr_text;
  EXPECT_GE(std::stoi(start.stdout_text), 10) << "the thread must tick while a cell runs";
  RunResult before = Cell(id, "print(ticks)");
  ASSERT_EQ(before.status, RunStatus::kOk) << before.message;
  // Idle for 1 s: unfrozen, the thread would tick about 200 times.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  RunResult after = Cell(id, "print(ticks)");
  ASSERT_EQ(after.status, RunStatus::kOk) << after.message;
  const int idle_ticks = std::stoi(after.stdout_text) - std::stoi(before.stdout_text);
  EXPECT_LT(idle_ticks, 20) << "the thread ran while the session was idle";
  EXPECT_GE(idle_ticks, 0);
  // Thawed for a call, it runs again.
  RunResult busy = Cell(id, "t0 = ticks\ntime.sleep(0.2)\nprint(ticks - t0)");
  ASSERT_EQ(busy.status, RunStatus::kOk) << busy.message;
  EXPECT_GE(std::stoi(busy.stdout_text), 10);
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, ExitingTheInterpreterLosesTheSession) {
  const std::string id = Open("bash");
  RunResult r = Cell(id, "echo bye; exit 3");
  EXPECT_EQ(r.error_code, "E_SESSION_LOST");
  EXPECT_EQ(r.stdout_text, "bye\n");
  EXPECT_NE(r.message.find("exited with code 3"), std::string::npos) << r.message;
  EXPECT_EQ(Cell(id, "echo again").error_code, "E_SESSION_LOST");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, AnOutputFloodLosesTheSession) {
  const std::string id = Open("python");
  RunResult r = Cell(id, "while True: print('x' * 1000)");
  EXPECT_EQ(r.status, RunStatus::kOutputLimit);
  EXPECT_EQ(r.error_code, "E_SESSION_LOST");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, ACallWhileAnotherRunsIsBusy) {
  const std::string id = Open("python");
  auto slow = std::async(std::launch::async, [&] { return Cell(id, "import time\ntime.sleep(1)\nprint('slept')"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  RunResult busy = Cell(id, "print(1)");
  EXPECT_EQ(busy.error_code, "E_SESSION_BUSY");
  EXPECT_EQ(slow.get().stdout_text, "slept\n");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, ClosingEndsACellInFlightAtOnce) {
  const std::string id = Open("python");
  auto slow = std::async(std::launch::async, [&] { return Cell(id, "import time\ntime.sleep(30)", 60'000); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(executor_->CloseSession(id).ok());
  RunResult r = slow.get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "close waited for the cell";
  EXPECT_EQ(r.error_code, "E_SESSION_LOST");
  EXPECT_EQ(Cell(id, "print(1)").error_code, "E_SESSION_NOT_FOUND");
}

TEST_F(SessionTest, CloseLeavesNothingBehind) {
  const size_t before = executor_->session_count();
  const std::string id = Open("python");
  ASSERT_EQ(Cell(id, "import os\nprint(os.getpid())").status, RunStatus::kOk);
  EXPECT_EQ(executor_->session_count(), before + 1);
  EXPECT_TRUE(executor_->CloseSession(id).ok());
  EXPECT_EQ(executor_->session_count(), before);
  EXPECT_EQ(executor_->CloseSession(id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(NoProcessWith("_airlock_session"));
}

TEST_F(SessionTest, RefusesWhatASessionCannotTake) {
  EXPECT_EQ(executor_->OpenSession({.id = "s_c", .language = "c"}).code(), StatusCode::kNotFound);
  EXPECT_EQ(executor_->OpenSession({.id = "s_x", .language = "cobol"}).code(), StatusCode::kNotFound);
  EXPECT_EQ(executor_->OpenSession({.id = "s_big", .language = "python", .memory_mb = 1u << 20}).code(),
            StatusCode::kInvalidArgument);
  const std::string id = Open("php");
  RunRequest r;
  r.session_id = id;
  r.code = "echo 1;";
  r.stdin_data = "x";
  CancelToken cancel;
  EXPECT_EQ(executor_->Run(r, nullptr, cancel).error_code, "invalid_request");
  r.stdin_data.clear();
  r.args = {"a"};
  EXPECT_EQ(executor_->Run(r, nullptr, cancel).error_code, "invalid_request");
  EXPECT_EQ(executor_->OpenSession({.id = id, .language = "php"}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(SessionTest, NativeSessionsRefuseToPauseAndGoOn) {
  const size_t before = executor_->session_count();
  const std::string id = Open("python");
  ASSERT_EQ(Cell(id, "kept = 41").status, RunStatus::kOk);
  Status paused = executor_->PauseSession(id);
  EXPECT_EQ(paused.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(paused.message().rfind("E_SESSION_NOT_PAUSABLE", 0), 0u) << paused.ToString();
  Status forked = executor_->ForkSession(id, {.id = id + "_copy", .language = "python"});
  EXPECT_EQ(forked.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(forked.message().rfind("E_SESSION_NOT_PAUSABLE", 0), 0u) << forked.ToString();
  EXPECT_EQ(executor_->session_count(), before + 1) << "a refused fork adds no session";
  EXPECT_TRUE(executor_->ResumeSession(id).ok()) << "resuming a live session does nothing";
  EXPECT_EQ(executor_->Health()["paused_sessions"], 0);
  // The session goes on, state and all.
  RunResult r = Cell(id, "print(kept + 1)");
  EXPECT_EQ(r.stdout_text, "42\n") << r.stderr_text << r.message;
  EXPECT_EQ(executor_->PauseSession("s_none").code(), StatusCode::kNotFound);
  EXPECT_EQ(executor_->ResumeSession("s_none").code(), StatusCode::kNotFound);
  EXPECT_EQ(executor_->ForkSession("s_none", {.id = "s_none_copy", .language = "python"}).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(executor_->session_image_dir(), "") << "no image directory without a session that can be paused";
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

}  // namespace
}  // namespace airlock::runtimes
