// Pre-started interpreters (Jail::Start / Jail::Resume, prestart_harness.h):
// a pooled run that resumes a waiting interpreter must be indistinguishable
// from a cold run of the same request (but for the documented differences
// of prestart_harness.h) — same stdout, stderr, exit status,
// output files, rlimits — and its clock starts at the hand-over. Each case
// runs twice on one executor: the first run is a pool miss (cold, asserted),
// the second resumes the pre-started interpreter the miss asked for.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "jail/host.h"
#include "jail/jail.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

class PrestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value();
    std::vector<LanguageSpec> languages = BuiltinLanguages();
    for (LanguageSpec& l : WasmTierLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js", DefaultWasmCacheDir())) {
      languages.push_back(std::move(l));
    }
    auto ex = LocalExecutor::Create(*host_, {}, std::move(languages));
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    executor_ = std::move(ex).value();
    executor_->EnablePool({.max_per_shape = 1, .min_per_shape = 1, .max_total = 64}, {});
  }

  // Waits until the pool has made every jail it wants.
  void Settle() {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (executor_->pool()->stats().pending > 0 && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(executor_->pool()->stats().pending, 0u) << "the pool did not refill";
  }

  // Runs `req` cold (a pool miss), then pre-started; returns both. Each call
  // gets a pool of its own (only the languages' default shapes are pooled,
  // so a fresh, unwarmed pool is what makes the first run a miss).
  std::pair<RunResult, RunResult> ColdThenPrestarted(RunRequest req, const std::string& what = "") {
    executor_->EnablePool({.max_per_shape = 1, .min_per_shape = 1, .max_total = 64}, {});
    CancelToken cancel;
    Settle();
    const uint64_t pre0 = executor_->prestarted_runs();
    RunResult cold = executor_->Run(req, nullptr, cancel);
    EXPECT_EQ(executor_->prestarted_runs(), pre0) << what << ": the first run must be cold";
    Settle();
    RunResult warm = executor_->Run(req, nullptr, cancel);
    EXPECT_EQ(executor_->prestarted_runs(), pre0 + 1)
        << what << ": the second run must resume a pre-started interpreter (" << RunStatusName(warm.status) << ": "
        << warm.message << ")";
    return {cold, warm};
  }

  bool Have(const std::string& language, const std::string& isolation = "native") {
    const LanguageSpec* spec = executor_->Find(language, false, isolation);
    return spec != nullptr && !spec->prestart_argv.empty();
  }

  std::unique_ptr<jail::JailHost> host_;
  std::unique_ptr<LocalExecutor> executor_;
};

// Node's stack traces end in the frames that called Module.runMain: each
// harness's own "[eval]" frames (NodeRunHarness for the cold run,
// NodePrestartHarness for the pre-started one). Everything above is compared.
std::string WithoutEntryFrames(const std::string& stderr_text) {
  std::string out, line;
  for (size_t i = 0; i <= stderr_text.size(); ++i) {
    if (i < stderr_text.size() && stderr_text[i] != '\n') {
      line += stderr_text[i];
      continue;
    }
    const bool entry = line.find("[eval]") != std::string::npos ||
                       line.find("node:internal/vm:") != std::string::npos ||
                       line.find("node:internal/process/execution") != std::string::npos ||
                       line.find("node:internal/main/run_main_module") != std::string::npos;
    if (!entry) out += line + (i < stderr_text.size() ? "\n" : "");
    line.clear();
  }
  return out;
}

void ExpectSame(const RunResult& cold, const RunResult& warm, const std::string& what) {
  EXPECT_EQ(RunStatusName(warm.status), RunStatusName(cold.status)) << what << ": " << warm.message;
  EXPECT_EQ(warm.exit_code, cold.exit_code) << what;
  EXPECT_EQ(warm.signal, cold.signal) << what;
  EXPECT_EQ(warm.stdout_text, cold.stdout_text) << what;
  if (warm.language == "javascript" || warm.language == "typescript") {
    EXPECT_EQ(WithoutEntryFrames(warm.stderr_text), WithoutEntryFrames(cold.stderr_text)) << what;
  } else {
    EXPECT_EQ(warm.stderr_text, cold.stderr_text) << what;
  }
  ASSERT_EQ(warm.files.size(), cold.files.size()) << what;
  for (size_t i = 0; i < cold.files.size(); ++i) {
    EXPECT_EQ(warm.files[i].name, cold.files[i].name) << what;
    EXPECT_EQ(warm.files[i].content, cold.files[i].content) << what;
  }
}

constexpr const char* kPythonExitSemantics =
    "import atexit, sys\n"
    "class Noisy:\n"
    "    def __del__(self):\n"
    "        print('del', flush=False)\n"
    "keep = Noisy()\n"
    "f = open('out.txt', 'w')\n"
    "f.write('written')\n"
    "atexit.register(lambda: print('atexit', file=sys.stderr))\n"
    "try:\n"
    "    import threading, time\n"
    "    threading.Thread(target=lambda: (time.sleep(0.05), print('thread'))).start()\n"
    "except RuntimeError:\n"
    "    print('thread')  # no threads in the WASM tier\n"
    "print('main done', end='')\n";

struct Program {
  std::string language;
  std::string what;
  std::string code;
  std::string isolation = "native";
};

// For each language: everything a program can observe of how it was
// started, then the ways it can end.
std::vector<Program> Programs() {
  return {
      {"python", "environment",
       "import sys, os, resource\n"
       "print(sys.argv, sys.orig_argv[1:], __name__, __file__, __spec__, __package__, __doc__)\n"
       "print(sorted(k for k in globals()), type(__loader__).__name__, __loader__.path)\n"
       "print(repr(sys.stdin.read()), os.getcwd(), sorted(os.environ.items()))\n"
       "print(resource.getrlimit(resource.RLIMIT_CPU), resource.getrlimit(resource.RLIMIT_NOFILE))\n"
       "print(sorted(os.listdir('/proc/self/fd')), open('in/data.txt').read(), sorted(os.listdir('.')))\n"
       "print('nice', sorted({int(open(f'/proc/self/task/{t}/stat').read().rsplit(')', 1)[1].split()[16])\n"
       "                      for t in os.listdir('/proc/self/task')}))\n"
       "open('out.txt', 'w').write('written')\n"},
      {"python", "uncaught exception", "def f():\n    raise ValueError('boom')\nprint('before')\nf()\n"},
      {"python", "syntax error", "print('never'\n"},
      {"python", "sys.exit", "import atexit, sys\natexit.register(lambda: print('atexit'))\nsys.exit(7)\n"},
      {"python", "killed by a signal", "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n"},
      // The harness ends a run without tearing the interpreter down; what a
      // program sees of the exit must not change: threads joined, atexit,
      // __del__ of the program's objects, its unclosed files flushed.
      {"python", "what the exit does", kPythonExitSemantics},
      {"python", "sys.exit with a message", "import sys\nprint('out')\nsys.exit('bye')\n"},
      {"python", "exit status above 255", "import sys\nsys.exit(258)\n"},
      {"javascript", "environment",
       "const fs = require('fs');\n"
       "console.log(process.argv, process.execArgv, require.main === module, __filename, __dirname);\n"
       "console.log(JSON.stringify(fs.readFileSync(0, 'utf8')), process.cwd(), JSON.stringify(process.env));\n"
       "console.log(fs.readdirSync('/proc/self/fd').length >= 3, fs.readFileSync('in/data.txt', 'utf8'));\n"
       "const nice = new Set(fs.readdirSync('/proc/self/task').map(\n"
       "    (t) => fs.readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(')').pop().trim().split(' ')[16]));\n"
       "console.log('nice', [...nice]);\n"
       "fs.writeFileSync('out.txt', 'written');\n"},
      {"javascript", "uncaught exception", "function f() { throw new Error('boom'); }\nconsole.log('before');\nf();\n"},
      {"javascript", "syntax error", "console.log('never'\n"},
      {"javascript", "process.exit", "process.on('exit', (c) => console.log('exit', c));\nprocess.exit(7);\n"},
      // TypeScript: esbuild runs in a jail of its own, then the waiting node
      // gets main.js with the input files.
      {"typescript", "environment",
       "import * as fs from 'fs';\n"
       "interface Seen { argv: string[]; stdin: string }\n"
       "const seen: Seen = { argv: process.argv, stdin: fs.readFileSync(0, 'utf8') };\n"
       "console.log(JSON.stringify(seen), require.main === module, __filename, process.cwd());\n"
       "console.log(fs.readFileSync('in/data.txt', 'utf8'), fs.readdirSync('.').sort().join(','));\n"
       "fs.writeFileSync('out.txt', 'written');\n"},
      {"typescript", "uncaught exception", "function f(): never { throw new Error('boom'); }\nf();\n"},
      {"ruby", "environment",
       "p ARGV, $0, __FILE__, $0 == __FILE__, local_variables\n"
       "p $stdin.read, Dir.pwd, ENV.to_h.sort, File.read('in/data.txt')\n"
       "p Process.getrlimit(:CPU)\n"
       "File.write('out.txt', 'written')\n"},
      {"ruby", "uncaught exception", "def f = raise('boom')\nputs 'before'\nf\n"},
      {"ruby", "syntax error", "puts('never'\n"},
      {"ruby", "exit", "at_exit { puts 'at_exit' }\nexit 7\n"},
      {"php", "environment",
       "<?php\nvar_dump($argv, $argc, __FILE__, $_SERVER['SCRIPT_NAME'], $_SERVER['argv'], getcwd());\n"
       "var_dump(stream_get_contents(STDIN), file_get_contents('in/data.txt'), getenv());\n"
       "file_put_contents('out.txt', 'written');\n"},
      {"php", "exit", "<?php\nregister_shutdown_function(function () { echo \"shutdown\\n\"; });\nexit(7);\n"},
      // CPython in the WASM tier (airlock-js --resume-fd).
      {"python", "environment",
       "import sys, os\n"
       "print(sys.argv, sys.orig_argv[1:], __name__, __file__, __spec__, sorted(globals()))\n"
       "print(repr(sys.stdin.read()), os.getcwd(), open('in/data.txt').read(), sorted(os.listdir('.')))\n"
       "open('out.txt', 'w').write('written')\n",
       "wasm"},
      {"python", "escape attempts",
       "import os\n"
       "def t(f):\n"
       "    try:\n"
       "        return f()\n"
       "    except BaseException as e:\n"
       "        return type(e).__name__\n"
       "print(t(lambda: open('/etc/passwd').read()[:20]), t(lambda: open('/proc/self/environ').read()))\n"
       "print(sorted(os.listdir('/')), dict(os.environ))\n"
       "print(t(lambda: __import__('socket').socket()), t(lambda: __import__('subprocess').run(['id'])))\n",
       "wasm"},
      {"python", "uncaught exception", "def f():\n    raise ValueError('boom')\nprint('before')\nf()\n", "wasm"},
      {"python", "syntax error", "print('never'\n", "wasm"},
      {"python", "sys.exit", "import atexit, sys\natexit.register(lambda: print('atexit'))\nsys.exit(7)\n", "wasm"},
      {"python", "what the exit does", kPythonExitSemantics, "wasm"},
      // JavaScript in the WASM tier (airlock-js --resume-fd): no stdin, no
      // files; the arguments are scriptArgs.
      {"javascript", "arguments and globals",
       "console.log(JSON.stringify(scriptArgs), Object.isFrozen(scriptArgs));\n"
       "console.log(typeof require, typeof process, typeof tools, Object.getOwnPropertyNames(globalThis).length);\n"
       "const t0 = Date.now(); 1 + 1;\n",
       "wasm"},
      {"javascript", "uncaught exception", "function f() { throw new Error('boom'); }\nconsole.log('before');\nf();\n",
       "wasm"},
      {"javascript", "syntax error", "console.log('never'\n", "wasm"},
      // Ruby in the WASM tier: the VM booted before the hand-over.
      {"ruby", "environment",
       "p ARGV, $0, __FILE__\n"
       "p $stdin.read, Dir.pwd, File.read('in/data.txt'), Dir.children('.').sort\n"
       "File.write('out.txt', 'written')\n",
       "wasm"},
      {"ruby", "escape attempts",
       "def t\n  yield\nrescue Exception => e\n  e.class.name\nend\n"
       "p t { File.read('/etc/passwd')[0, 20] }, t { File.read('/proc/self/environ') }\n"
       "p Dir.children('/').sort, ENV.to_h\n"
       "p t { require 'socket'; TCPSocket.new('127.0.0.1', 22) }, t { system('id') }, t { `id` }\n",
       "wasm"},
      {"ruby", "uncaught exception", "def f = raise('boom')\nputs 'before'\nf\n", "wasm"},
      {"ruby", "exit", "at_exit { puts 'at_exit' }\nexit 7\n", "wasm"},
      // PHP in the WASM tier: the module compiled and PHP started before the
      // hand-over, which arrives on the guest's stdin.
      {"php", "environment",
       "<?php\nvar_dump($argv, $argc, $_SERVER['SCRIPT_NAME'], $_SERVER['argv'], getcwd());\n"
       "var_dump(stream_get_contents(STDIN), file_get_contents('in/data.txt'), getenv());\n"
       "file_put_contents('out.txt', 'written');\n",
       "wasm"},
      {"php", "escape attempts",
       "<?php\nvar_dump(@file_get_contents('/etc/passwd'), @file_get_contents('/proc/self/environ'), scandir('/'),\n"
       "  getenv(), @fsockopen('127.0.0.1', 22), function_exists('proc_open'), function_exists('shell_exec'));\n",
       "wasm"},
      {"php", "fatal error from nested calls",
       "<?php\nregister_shutdown_function(function () { echo \"shutdown\\n\"; });\n"
       "function a() { b(); }\nfunction b() { echo \"in b\\n\"; trigger_error('giving up', E_USER_ERROR); }\n"
       "a();\necho \"never\\n\";\n",
       "wasm"},
      {"php", "exit", "<?php\nregister_shutdown_function(function () { echo \"shutdown\\n\"; });\n"
       "function f() { exit(7); }\nf();\n", "wasm"},
  };
}

TEST_F(PrestartTest, APreStartedRunMatchesAColdOne) {
  int compared = 0;
  for (const Program& p : Programs()) {
    if (!Have(p.language, p.isolation)) continue;
    RunRequest req;
    req.language = p.language;
    req.isolation = p.isolation;
    req.code = p.code;
    req.args = {"one", "two words", "ünï"};
    req.stdin_data = "line 1\nline 2\n";
    req.files = {{"in/data.txt", "input file"}};
    req.output_globs = {"out.txt"};
    // No program here runs long: the clock only has to outlast a cold start,
    // and a cold start (CPython in the WASM engine, esbuild then node) takes
    // seconds on a loaded host or a fresh machine's cold page cache.
    req.timeout_ms = p.isolation == "wasm" ? 30000 : 20000;
    const std::string what = p.language + " (" + p.isolation + ") " + p.what;
    auto [cold, warm] = ColdThenPrestarted(req, what);
    ExpectSame(cold, warm, what);
    if (p.what == "escape attempts") {
      // The engine's guest has no host files, environment or processes.
      EXPECT_EQ(warm.stdout_text.find("root:x"), std::string::npos) << warm.stdout_text;
      EXPECT_EQ(warm.stdout_text.find("uid="), std::string::npos) << warm.stdout_text;
      EXPECT_EQ(warm.stdout_text.find("/usr/local/sbin"), std::string::npos) << warm.stdout_text;  // the host PATH
    }
    if (p.what == "environment") {
      EXPECT_EQ(cold.status, RunStatus::kOk) << p.language << ": " << cold.stderr_text;
      EXPECT_NE(cold.stdout_text.find("two words"), std::string::npos) << cold.stdout_text;
      EXPECT_NE(cold.stdout_text.find("line 1"), std::string::npos) << cold.stdout_text;
      if (p.isolation == "native" && (p.language == "python" || p.language == "javascript")) {
        // Every thread at the normal priority (the pool starts them lower).
        EXPECT_NE(warm.stdout_text.find(p.language == "python" ? "nice [0]" : "nice [ '0' ]"), std::string::npos)
            << warm.stdout_text;
      }
      ASSERT_EQ(warm.files.size(), 1u) << p.language;
      EXPECT_EQ(warm.files[0].content, "written");
    }
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no interpreter with a pre-started form is installed";
}

// Node makes a stdout pipe non-blocking and queues in memory what the pipe
// cannot take; a flood then fills the program's memory before it meets the
// output limit whenever the supervisor drains slower (a busy machine: seen
// as memory_limit in the soak, for a cold TypeScript run). Both the cold and
// the pre-started node write blocking, JavaScript's and TypeScript's.
TEST_F(PrestartTest, NodeWritesItsOutputBlockingColdAndPreStarted) {
  if (!Have("javascript")) GTEST_SKIP() << "no node";
  RunRequest req;
  req.code =
      "const fs = require('fs');\n"
      "const mode = (fd) => (parseInt(/flags:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/fdinfo/' + fd, 'utf8'))[1], 8)"
      " & 0o4000) ? 'nonblocking' : 'blocking';\n"
      "const out = process.stdout, err = process.stderr;\n"
      "out.write(mode(1) + ' ' + mode(2) + '\\n');\n";
  req.timeout_ms = 20000;
  for (const char* language : {"javascript", "typescript"}) {
    if (!Have(language)) continue;
    req.language = language;
    auto [cold, warm] = ColdThenPrestarted(req, std::string(language) + " stdio mode");
    ASSERT_EQ(cold.status, RunStatus::kOk) << language << ": " << cold.message << cold.stderr_text;
    ASSERT_EQ(warm.status, RunStatus::kOk) << language << ": " << warm.message << warm.stderr_text;
    EXPECT_EQ(cold.stdout_text, "blocking blocking\n") << language;
    EXPECT_EQ(warm.stdout_text, "blocking blocking\n") << language;
  }
}

TEST_F(PrestartTest, ATypeScriptCompileErrorIsReportedAsFromAColdRun) {
  if (!Have("typescript")) GTEST_SKIP() << "esbuild or node not installed";
  RunRequest req;
  req.language = "typescript";
  req.code = "const x: number = ;\n";
  CancelToken cancel;
  RunResult cold = executor_->Run(req, nullptr, cancel);
  Settle();
  RunResult warm = executor_->Run(req, nullptr, cancel);
  for (const RunResult* r : {&cold, &warm}) {
    EXPECT_EQ(RunStatusName(r->status), RunStatusName(RunStatus::kCompileError)) << r->message;
    EXPECT_NE(r->compile_output.find("Unexpected \";\""), std::string::npos) << r->compile_output;
  }
  EXPECT_EQ(warm.compile_output, cold.compile_output);
}

TEST_F(PrestartTest, RlimitCpuIsTheRunsNotTheStartsAndTheClockStartsAtResume) {
  if (!Have("python")) GTEST_SKIP() << "python not installed";
  RunRequest req;
  req.language = "python";
  req.code = "import resource\nprint(resource.getrlimit(resource.RLIMIT_CPU))\n";
  req.timeout_ms = 1500;
  auto [cold, warm] = ColdThenPrestarted(req);
  EXPECT_EQ(cold.stdout_text, "(3, 4)\n") << cold.stderr_text;
  EXPECT_EQ(warm.stdout_text, "(3, 4)\n") << warm.stderr_text;

  // The interpreter waited in the pool longer than the run's whole timeout:
  // that time is not the run's.
  Settle();
  std::this_thread::sleep_for(std::chrono::milliseconds(1800));
  CancelToken cancel;
  const uint64_t pre0 = executor_->prestarted_runs();
  RunResult late = executor_->Run(req, nullptr, cancel);
  EXPECT_EQ(executor_->prestarted_runs(), pre0 + 1);
  EXPECT_EQ(late.status, RunStatus::kOk) << late.message;
  EXPECT_LT(late.wall_ms, 1000u);
}

TEST_F(PrestartTest, TheWasmEnginesDeadlineComesWithTheHandOver) {
  const std::vector<std::pair<std::string, std::string>> loops = {
      {"python", "while True: pass\n"}, {"javascript", "for (;;) {}\n"}, {"ruby", "loop {}\n"}};
  int ran = 0;
  for (const auto& [language, code] : loops) {
    if (!Have(language, "wasm")) continue;
    RunRequest req;
    req.language = language;
    req.isolation = "wasm";
    req.code = code;
    req.timeout_ms = 1000;
    auto [cold, warm] = ColdThenPrestarted(req);
    EXPECT_EQ(RunStatusName(cold.status), RunStatusName(RunStatus::kTimeout)) << language << cold.message;
    EXPECT_EQ(RunStatusName(warm.status), RunStatusName(RunStatus::kTimeout)) << language << warm.message;
    // The clock started at the hand-over: not at the pre-start (long past:
    // it would end at once), and the run did end (the engine's deadline, or
    // on a loaded machine the jail's backstop just behind it).
    EXPECT_GE(warm.wall_ms, 900u) << language;
    EXPECT_LT(warm.wall_ms, 3000u) << language;
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no pre-started WASM-tier language";
}

TEST_F(PrestartTest, LimitsHoldInAPreStartedInterpreter) {
  if (!Have("python")) GTEST_SKIP() << "python not installed";
  struct Case {
    std::string code;
    RunStatus expected;
  };
  const std::vector<Case> cases = {
      {"while True: pass\n", RunStatus::kTimeout},
      {"x = bytearray(1 << 30)\n", RunStatus::kMemoryLimit},
      {"import sys\nsys.stdout.write('x' * (4 << 20))\n", RunStatus::kOutputLimit},
  };
  for (const Case& c : cases) {
    RunRequest req;
    req.language = "python";
    req.code = c.code;
    req.timeout_ms = 1000;
    req.max_output_bytes = 1 << 20;
    auto [cold, warm] = ColdThenPrestarted(req);
    EXPECT_EQ(RunStatusName(cold.status), RunStatusName(c.expected)) << c.code << cold.message;
    EXPECT_EQ(RunStatusName(warm.status), RunStatusName(c.expected)) << c.code << warm.message;
  }
}

// The parent pid and name of /proc/<pid>/stat.
bool StatOf(pid_t pid, pid_t* ppid, std::string* comm) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 4 > stat.size()) return false;
  *comm = stat.substr(open + 1, close - open - 1);
  *ppid = static_cast<pid_t>(std::atoi(stat.c_str() + close + 4));  // ") S <ppid>"
  return true;
}

// SIGKILLs the programs waiting in this process's ready jails (the children
// of the airlock-init processes it started), as the OOM killer might. Returns
// how many it killed.
int KillWaitingPrograms() {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) pids.push_back(std::stoi(name));
  }
  std::set<pid_t> inits;
  for (pid_t pid : pids) {
    pid_t ppid = 0;
    std::string comm;
    if (StatOf(pid, &ppid, &comm) && ppid == ::getpid() && comm == "airlock-init") inits.insert(pid);
  }
  int killed = 0;
  for (pid_t pid : pids) {
    pid_t ppid = 0;
    std::string comm;
    if (StatOf(pid, &ppid, &comm) && inits.count(ppid) != 0 && ::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

TEST_F(PrestartTest, AnInterpreterThatDiedWhileWaitingIsNotHandedOut) {
  if (!Have("python")) GTEST_SKIP() << "python not installed";
  RunRequest req;
  req.language = "python";
  req.code = "print('served')";
  CancelToken cancel;
  Settle();
  EXPECT_EQ(executor_->Run(req, nullptr, cancel).stdout_text, "served\n");  // a miss: the pool now wants one
  Settle();
  ASSERT_EQ(executor_->pool()->stats().ready, 1u);
  ASSERT_EQ(KillWaitingPrograms(), 1) << "one interpreter should be waiting";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the kill lands, its pipes close

  const uint64_t pre0 = executor_->prestarted_runs();
  const uint64_t discarded0 = executor_->pool()->stats().discarded;
  RunResult r = executor_->Run(req, nullptr, cancel);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "served\n");
  EXPECT_EQ(executor_->prestarted_runs(), pre0) << "the dead interpreter was resumed";
  EXPECT_EQ(executor_->pool()->stats().discarded, discarded0 + 1);
}

class JailStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value();
    auto policy = jail::BuildDefaultPolicy({});
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    policy_ = std::move(policy).value();
    auto j = jail::Jail::Create(*host_, jail::JailConfig{});
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    jail_ = std::move(j).value();
  }

  jail::ExecRequest Shell(const std::string& script) {
    jail::ExecRequest r;
    r.argv = {"/bin/sh", "-c", script};
    r.env = {"PATH=/usr/bin:/bin"};
    r.seccomp = &policy_;
    r.limits.wall_ms = 5000;
    return r;
  }

  std::unique_ptr<jail::JailHost> host_;
  jail::BpfProgram policy_;
  std::unique_ptr<jail::Jail> jail_;
};

TEST_F(JailStartTest, ResumeHandsOverArgsStdinAndFilesThroughFd3) {
  // The program waits for fd 3's EOF, then shows what it was handed.
  ASSERT_TRUE(jail_->Start(Shell("tr '\\0' '|' <&3; echo; cat; cat /work/f.txt; echo out > /work/o.txt")).ok());
  EXPECT_TRUE(jail_->started());
  jail::ExecRequest again = Shell("true");
  EXPECT_EQ(jail_->Exec(again, nullptr).outcome, jail::ExecResult::Outcome::kJailError) << "one program at a time";
  jail::ResumeRequest resume;
  resume.args = {"a", "b c"};
  resume.stdin_data = "from stdin\n";
  resume.files = {{"f.txt", "from a file\n"}};
  resume.output_globs = {"o.txt"};
  resume.limits.wall_ms = 5000;
  jail::ExecResult r = jail_->Resume(resume, nullptr);
  EXPECT_EQ(r.outcome, jail::ExecResult::Outcome::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 0) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "a|b c|\nfrom stdin\nfrom a file\n");
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(r.files[0].content, "out\n");
  EXPECT_FALSE(jail_->started());
  EXPECT_EQ(jail_->Resume(resume, nullptr).outcome, jail::ExecResult::Outcome::kJailError) << "nothing is started";
}

TEST_F(JailStartTest, AProgramThatCannotStartIsAnErrorAndTheJailStaysUsable) {
  jail::ExecRequest bad = Shell("");
  bad.argv = {"/nonexistent/interpreter"};
  Status st = jail_->Start(bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("execve"), std::string::npos) << st.message();
  EXPECT_FALSE(jail_->started());
  jail::ExecResult r = jail_->Exec(Shell("echo fine"), nullptr);
  EXPECT_EQ(r.stdout_data, "fine\n") << r.error;
}

TEST_F(JailStartTest, StartRefusesInputThatBelongsToResume) {
  jail::ExecRequest r = Shell("cat");
  r.stdin_data = "x";
  EXPECT_EQ(jail_->Start(r).code(), StatusCode::kInvalidArgument);
  r = Shell("cat");
  r.seccomp = nullptr;
  EXPECT_EQ(jail_->Start(r).code(), StatusCode::kInvalidArgument);
}

TEST_F(JailStartTest, TheWallClockOfAResumedProgramIsEnforced) {
  ASSERT_TRUE(jail_->Start(Shell("cat <&3 >/dev/null; sleep 10")).ok());
  jail::ResumeRequest resume;
  resume.limits.wall_ms = 300;
  const auto t0 = std::chrono::steady_clock::now();
  jail::ExecResult r = jail_->Resume(resume, nullptr);
  EXPECT_EQ(r.outcome, jail::ExecResult::Outcome::kTimedOut) << r.error;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_FALSE(jail_->alive());
}

TEST_F(JailStartTest, UsableWhileTheStartedProgramWaits) {
  EXPECT_TRUE(jail_->Usable());
  // Redirecting one of stdout and stderr does not make a program look dead.
  ASSERT_TRUE(jail_->Start(Shell("exec >/dev/null; cat <&3")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(jail_->Usable());
  jail::ResumeRequest resume;
  resume.limits.wall_ms = 5000;
  EXPECT_EQ(jail_->Resume(resume, nullptr).outcome, jail::ExecResult::Outcome::kExited);
}

// Waits (up to 5 s) for the jail to stop being usable.
bool BecomesUnusable(const jail::Jail& j) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (j.Usable() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !j.Usable();
}

TEST_F(JailStartTest, AStartedProgramThatExitsBeforeItsInputMakesTheJailUnusable) {
  ASSERT_TRUE(jail_->Start(Shell("exit 3")).ok());
  EXPECT_TRUE(BecomesUnusable(*jail_));
  EXPECT_TRUE(jail_->alive()) << "Usable only looks; Kill() tears down";
}

TEST_F(JailStartTest, AJailWhoseInitDiedIsUnusable) {
  ASSERT_GT(jail_->init_pid(), 0);
  ASSERT_EQ(::kill(jail_->init_pid(), SIGKILL), 0);
  EXPECT_TRUE(BecomesUnusable(*jail_));
}

}  // namespace
}  // namespace airlock::runtimes
