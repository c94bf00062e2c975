// Sessions in the WASM tier (open_session {isolation: "wasm"}): CPython for
// WASI in the engine, in a jail of its own, driven turn by turn over the
// engine's control channel (airlock-js --control-fd: the guest's fd 1000),
// with the same semantics as a native session: state and files persist
// across calls, each call has its own stdin, files and output files, a
// timeout or an output flood loses the session, memory is bounded for the
// whole session, a call while another runs is busy, close leaves nothing.
// Skipped where the CPython WASI build is not cached.
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "jail/host.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "selftest/host_snapshot.h"
#include "session_test_util.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

class WasmSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value().release();
    std::unique_ptr<LocalExecutor> ex = sessiontest::WasmTierExecutor(*host_);
    ASSERT_NE(ex, nullptr);
    executor_ = ex.release();
  }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
    delete host_;
    host_ = nullptr;
  }
  void SetUp() override {
    if (executor_->Find("python", false, "wasm") == nullptr) {
      GTEST_SKIP() << "no CPython WASI build (scripts/wasm/build_python.sh)";
    }
  }

  std::string Open(uint64_t memory_mb = 0) {
    return sessiontest::OpenTestSession(*executor_, "wasm", "python", "wasm", memory_mb);
  }

  RunResult Cell(const std::string& id, const std::string& code, uint64_t timeout_ms = 20'000,
                 std::vector<InputFile> files = {}, std::vector<std::string> globs = {}, std::string stdin_data = "") {
    return sessiontest::RunCell(*executor_, id, code, timeout_ms, std::move(files), std::move(globs),
                            std::move(stdin_data));
  }

  static jail::JailHost* host_;
  static LocalExecutor* executor_;
};

jail::JailHost* WasmSessionTest::host_ = nullptr;
LocalExecutor* WasmSessionTest::executor_ = nullptr;

TEST_F(WasmSessionTest, TheLanguageListSaysWhichTiersHaveSessions) {
  for (const LanguageInfo& l : executor_->Languages()) {
    if (l.name != "python") continue;
    EXPECT_EQ(l.session_tiers, (std::vector<std::string>{"native", "wasm"}));
  }
  for (const LanguageInfo& l : executor_->Languages()) {
    if (l.name != "javascript") continue;
    EXPECT_EQ(l.session_tiers, (std::vector<std::string>{"native", "wasm"}));
    return;
  }
  ADD_FAILURE() << "javascript is not listed";
}

TEST_F(WasmSessionTest, StateFilesAndTheLastExpressionPersistAcrossCells) {
  const std::string id = Open();
  RunResult set = Cell(id, "import math, sys\nx = 41\ndef f(v):\n    return v + 1\n"
                           "open('note.txt', 'w').write('noted')\nsys.implementation._multiarch");
  ASSERT_EQ(set.status, RunStatus::kOk) << set.message << "\n" << set.stderr_text;
  EXPECT_EQ(set.stdout_text, "'wasm32-wasi'\n");  // the cell ran in the WASM tier
  RunResult get = Cell(id, "print(f(x), math.pi > 3, open('note.txt').read())\nx + 1");
  ASSERT_EQ(get.status, RunStatus::kOk) << get.message << "\n" << get.stderr_text;
  EXPECT_EQ(get.stdout_text, "42 True noted\n42\n");
  EXPECT_EQ(get.stdout_text.find("airlock-turn-end"), std::string::npos) << "the end marker leaked";
  // A second session sees none of it.
  const std::string other = Open();
  RunResult fresh = Cell(other, "import os\nprint('x' in globals(), sorted(os.listdir('.')))");
  EXPECT_EQ(fresh.stdout_text, "False []\n") << fresh.stderr_text;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
  EXPECT_TRUE(executor_->CloseSession(other).ok());
  EXPECT_EQ(Cell(id, "print(x)").error_code, "E_SESSION_NOT_FOUND");
}

TEST_F(WasmSessionTest, ExceptionsAndSysExitEndTheCellNotTheSession) {
  const std::string id = Open();
  ASSERT_EQ(Cell(id, "x = 41").status, RunStatus::kOk);
  RunResult err = Cell(id, "1/0");
  EXPECT_EQ(err.status, RunStatus::kExitNonzero);
  EXPECT_EQ(err.exit_code, 1);
  EXPECT_NE(err.stderr_text.find("ZeroDivisionError"), std::string::npos) << err.stderr_text;
  EXPECT_NE(err.stderr_text.find("<cell 2>"), std::string::npos) << err.stderr_text;
  EXPECT_EQ(err.stderr_text.find("_airlock_session"), std::string::npos) << "the harness frame shows";
  RunResult bad = Cell(id, "def (:");
  EXPECT_NE(bad.stderr_text.find("SyntaxError"), std::string::npos);
  RunResult exit = Cell(id, "import sys\nsys.exit(3)");
  EXPECT_EQ(exit.status, RunStatus::kExitNonzero);
  EXPECT_EQ(exit.exit_code, 3);
  RunResult still = Cell(id, "print(x)");
  EXPECT_EQ(still.status, RunStatus::kOk) << still.message;
  EXPECT_EQ(still.stdout_text, "41\n");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(WasmSessionTest, StdinFilesAndOutputFilesArePerCall) {
  const std::string id = Open();
  RunResult a = Cell(id, "import sys\nprint(sys.stdin.read().upper(), open('in.csv').read().count(','))", 20'000,
                     {{"in.csv", "a,b\n1,2\n"}}, {}, "hi");
  EXPECT_EQ(a.stdout_text, "HI 2\n") << a.stderr_text;
  RunResult b = Cell(id,
                     "import sys, os\nprint(repr(sys.stdin.read()), open('in.csv').read().count(','))\n"
                     "_ = open('out.txt','w').write('o')\nos.remove('in.csv')",
                     20'000, {}, {"*.txt"});
  EXPECT_EQ(b.stdout_text, "'' 2\n") << b.stderr_text;
  ASSERT_EQ(b.files.size(), 1u);
  EXPECT_EQ(b.files[0].name, "out.txt");
  EXPECT_EQ(b.files[0].content, "o");
  // A file a cell removed stays removed; a new input file arrives.
  RunResult c = Cell(id, "import os\nprint(sorted(os.listdir('.')), open('more.txt').read())", 20'000,
                     {{"more.txt", "more"}});
  EXPECT_EQ(c.stdout_text, "['more.txt', 'out.txt'] more\n") << c.stderr_text;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(WasmSessionTest, TheHostIsNotThere) {
  const std::string id = Open();
  RunResult r = Cell(id,
                     "import os\n"
                     "def t(f):\n"
                     "    try:\n"
                     "        return f()\n"
                     "    except BaseException as e:\n"
                     "        return type(e).__name__\n"
                     "print(t(lambda: open('/etc/passwd').read()[:20]), t(lambda: open('/proc/self/environ').read()))\n"
                     "print(dict(os.environ), t(lambda: __import__('socket').socket()), t(lambda: os.read(3, 10)))");
  EXPECT_EQ(r.stdout_text.find("root:x"), std::string::npos) << r.stdout_text;
  // The environment is the two variables the engine gives CPython, no more.
  EXPECT_NE(r.stdout_text.find("{'PYTHONHOME': '/usr', 'PYTHONDONTWRITEBYTECODE': '1'}"), std::string::npos)
      << r.stdout_text;
  // A cell that writes to the control channel forges nothing the supervisor
  // takes for an answer: the session is lost, not fooled.
  r = Cell(id, "import os\nos.write(1000, b'forged 0 ok\\n')\nprint('after the forgery')");
  if (r.error_code != "E_SESSION_LOST") {
    RunResult after = Cell(id, "print('alive')");
    EXPECT_TRUE(after.stdout_text == "alive\n" || after.error_code == "E_SESSION_LOST") << after.stdout_text;
  }
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(WasmSessionTest, ATimeoutLosesTheSessionForGood) {
  const std::string id = Open();
  ASSERT_EQ(Cell(id, "x = 1").status, RunStatus::kOk);
  RunResult t = Cell(id, "while True: pass", 1000);
  EXPECT_EQ(t.status, RunStatus::kTimeout);
  EXPECT_EQ(t.error_code, "E_SESSION_LOST");
  RunResult after = Cell(id, "print(x)");
  EXPECT_EQ(after.error_code, "E_SESSION_LOST");
  EXPECT_NE(after.message.find("time limit"), std::string::npos) << after.message;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(WasmSessionTest, MemoryIsBoundedForTheWholeSession) {
  // 192 MiB: the guest has 128 MiB (the engine keeps 64). 40 MiB a cell:
  // the fourth cannot have its memory; the guest says so (MemoryError)
  // and the session goes on without it.
  const std::string id = Open(192);
  int ok_cells = 0;
  RunResult r;
  for (int i = 0; i < 6; ++i) {
    r = Cell(id, "blocks = globals().setdefault('blocks', [])\nblocks.append(bytearray(40 << 20))\nlen(blocks)");
    if (r.status != RunStatus::kOk) break;
    ++ok_cells;
  }
  EXPECT_GE(ok_cells, 1);
  EXPECT_LE(ok_cells, 3) << "the memory limit did not hold across calls";
  EXPECT_TRUE(r.error_code == "E_SESSION_LOST" || r.stderr_text.find("MemoryError") != std::string::npos)
      << r.message << r.stderr_text;
  if (r.error_code != "E_SESSION_LOST") {
    RunResult freed = Cell(id, "blocks.clear()\nimport gc\ngc.collect()\nprint(len(bytearray(40 << 20)))");
    EXPECT_EQ(freed.stdout_text, std::to_string(40 << 20) + "\n") << freed.stderr_text;
  }
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(WasmSessionTest, AnOutputFloodLosesTheSession) {
  const std::string id = Open();
  RunResult r = Cell(id, "while True: print('x' * 1000)");
  EXPECT_EQ(r.status, RunStatus::kOutputLimit);
  EXPECT_EQ(r.error_code, "E_SESSION_LOST");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(WasmSessionTest, ACallWhileAnotherRunsIsBusyAndCloseLeavesNothing) {
  const size_t before = executor_->session_count();
  // 199 MiB: an engine heap no other test's session has (parallel tests).
  const std::string id = Open(199);
  const std::string mine = "--wasm-max-mb 135 --work";
  EXPECT_EQ(selftest::ProcessesWithCmdline(mine).size(), 1u);
  auto slow = std::async(std::launch::async, [&] { return Cell(id, "import time\ntime.sleep(1)\nprint('slept')"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(Cell(id, "print(1)").error_code, "E_SESSION_BUSY");
  EXPECT_EQ(slow.get().stdout_text, "slept\n");
  EXPECT_EQ(executor_->session_count(), before + 1);
  EXPECT_TRUE(executor_->CloseSession(id).ok());
  EXPECT_EQ(executor_->session_count(), before);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!selftest::ProcessesWithCmdline(mine).empty() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(selftest::ProcessesWithCmdline(mine).empty()) << "the session's engine outlived close";
}

// JavaScript in the engine itself (airlock-js --session): one global for
// the session, the completion value shown, an exception ends the cell.
TEST_F(WasmSessionTest, JavaScriptKeepsItsGlobalAcrossCells) {
  const std::string id = sessiontest::OpenTestSession(*executor_, "wasmjs", "javascript", "wasm", 0);
  RunResult set = Cell(id, "var x = 41; let y = 1; function f(v) { return v + y; }");
  ASSERT_EQ(set.status, RunStatus::kOk) << set.message << set.stderr_text;
  EXPECT_EQ(set.stdout_text, "");
  RunResult get = Cell(id, "console.log(typeof require, typeof process); f(x)");
  EXPECT_EQ(get.stdout_text, "undefined undefined\n42\n") << get.stderr_text;
  EXPECT_EQ(get.isolation, "wasm");
  RunResult thrown = Cell(id, "throw new TypeError('boom')");
  EXPECT_EQ(thrown.status, RunStatus::kExitNonzero);
  EXPECT_NE(thrown.stderr_text.find("Uncaught TypeError: boom"), std::string::npos) << thrown.stderr_text;
  EXPECT_NE(thrown.stderr_text.find("<cell 3>"), std::string::npos) << thrown.stderr_text;
  RunResult again = Cell(id, "let y = 2");
  EXPECT_NE(again.stderr_text.find("redeclaration of let y"), std::string::npos) << again.stderr_text;
  RunResult awaited = Cell(id, "await Promise.resolve(y + 6)");
  EXPECT_EQ(awaited.stdout_text, "7\n") << awaited.stderr_text;
  RunResult jobs = Cell(id, "Promise.resolve(1).then((v) => console.log('job', v)); ({a: [x]})");
  EXPECT_EQ(jobs.stdout_text, "{\"a\":[41]}\njob 1\n") << jobs.stderr_text;
  // No stdin in this tier: refused, and the session goes on.
  RunRequest with_stdin;
  with_stdin.session_id = id;
  with_stdin.code = "1";
  with_stdin.stdin_data = "x";
  CancelToken cancel;
  EXPECT_EQ(executor_->Run(with_stdin, nullptr, cancel).error_code, "invalid_request");
  EXPECT_EQ(Cell(id, "x").stdout_text, "41\n");
  // Past its heap the engine stops: the session is lost.
  RunResult oom = Cell(id, "const a = []; while (true) a.push(new Array(1e6).fill(1));");
  EXPECT_EQ(oom.error_code, "E_SESSION_LOST") << oom.message;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

// PHP for WASI (php -r with the native harness over the guest's fd 1000,
// opened through php://fd without dup): eval() at global scope.
TEST_F(WasmSessionTest, PhpKeepsItsGlobalsAcrossCells) {
  if (executor_->Find("php", false, "wasm") == nullptr) GTEST_SKIP() << "no PHP WASI build";
  const std::string id = sessiontest::OpenTestSession(*executor_, "wasmphp", "php", "wasm", 0);
  RunResult set = Cell(id, "$x = 41; function f($v) { return $v + 1; } file_put_contents('note.txt', 'noted');");
  ASSERT_EQ(set.status, RunStatus::kOk) << set.message << set.stderr_text;
  RunResult get = Cell(id, "<?php echo f($x), ' ', file_get_contents('note.txt'), ' ', PHP_INT_SIZE, \"\\n\";");
  EXPECT_EQ(get.stdout_text, "42 noted 4\n") << get.stderr_text;  // 4: the wasm32 build
  EXPECT_EQ(get.isolation, "wasm");
  RunResult thrown = Cell(id, "throw new RuntimeException('boom');");
  EXPECT_EQ(thrown.status, RunStatus::kExitNonzero);
  EXPECT_NE(thrown.stderr_text.find("Uncaught RuntimeException: boom"), std::string::npos) << thrown.stderr_text;
  RunResult after = Cell(id, "echo $x, \"\\n\";", 20'000, {{"in.txt", "from the host"}}, {"out.txt"});
  EXPECT_EQ(after.stdout_text, "41\n") << after.stderr_text;
  RunResult files = Cell(id, "file_put_contents('out.txt', strtoupper(file_get_contents('in.txt')));", 20'000, {},
                         {"out.txt"});
  ASSERT_EQ(files.files.size(), 1u) << files.stderr_text;
  EXPECT_EQ(files.files[0].content, "FROM THE HOST");
  // exit() ends PHP itself, as natively: the session is lost.
  RunResult exited = Cell(id, "exit(3);");
  EXPECT_EQ(exited.error_code, "E_SESSION_LOST") << exited.message;
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

// Ruby (ruby.wasm, a reactor: the runner evaluates the harness with
// `ruby -e`): one top-level binding, values shown with inspect.
TEST_F(WasmSessionTest, RubyKeepsItsBindingAcrossCells) {
  if (executor_->Find("ruby", false, "wasm") == nullptr) GTEST_SKIP() << "no ruby.wasm";
  const std::string id = sessiontest::OpenTestSession(*executor_, "wasmrb", "ruby", "wasm", 0);
  RunResult set = Cell(id, "x = 41\ndef f(v) = v + 1\nFile.write('note.txt', 'noted')", 60'000);
  ASSERT_EQ(set.status, RunStatus::kOk) << set.message << set.stderr_text;
  RunResult get = Cell(id, "puts \"#{f(x)} #{File.read('note.txt')} #{RUBY_PLATFORM}\"\n[x, nil]", 60'000);
  EXPECT_EQ(get.stdout_text, "42 noted wasm32-wasi\n[41, nil]\n") << get.stderr_text;
  RunResult in = Cell(id, "$stdin.read.upcase", 60'000, {}, {}, "from stdin");
  EXPECT_EQ(in.stdout_text, "\"FROM STDIN\"\n") << in.stderr_text;
  RunResult thrown = Cell(id, "raise ArgumentError, 'boom'", 60'000);
  EXPECT_EQ(thrown.status, RunStatus::kExitNonzero);
  EXPECT_NE(thrown.stderr_text.find("boom (ArgumentError)"), std::string::npos) << thrown.stderr_text;
  RunResult exited = Cell(id, "exit 3", 60'000);
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_EQ(Cell(id, "x", 60'000).stdout_text, "41\n");
  EXPECT_TRUE(executor_->CloseSession(id).ok());
}

TEST_F(WasmSessionTest, RefusesATierWithoutSessions) {
  EXPECT_EQ(executor_->OpenSession({.id = "s_w_c", .language = "c", .isolation = "wasm"}).code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace airlock::runtimes
