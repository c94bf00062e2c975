// The WASM tier end to end through the CLI (`airlock run --isolation wasm`):
// JavaScript runs in the embedded engine inside the jail; the engine's limits
// come back as the native tier's statuses; tier selection errors are clear.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run_util.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;
const std::string kAirlock = std::string(AIRLOCK_BINARY_DIR) + "/airlock";

using Outcome = testing::CliOutcome;

class WasmTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js")) GTEST_SKIP() << "needs airlock-js";
    dir_ = fs::temp_directory_path() / ("airlock-wasm-tier-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  Outcome Run(const std::string& lang, const std::string& code, const std::string& extra = "") {
    const fs::path src = dir_ / "prog";
    std::ofstream(src) << code;
    const std::string cmd = kAirlock + " run --json --isolation wasm --lang " + lang + " " + extra + " " +
                            src.string() + " 2>/dev/null";
    return testing::RunCommandLine(cmd);
  }

  fs::path dir_;
};

TEST_F(WasmTierTest, HelloWorldArgsAndTheProgramsValue) {
  Outcome o = Run("javascript", "console.log('hello', scriptArgs.join('+')); 6 * 7", "--arg a --arg 'b c'");
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["isolation"], "wasm");
  EXPECT_EQ(r["stdout"], "hello a+b c\n42\n");
}

TEST_F(WasmTierTest, AnUncaughtErrorIsARuntimeError) {
  nlohmann::json r = Run("javascript", "null.x").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "exit_nonzero");
  EXPECT_NE(r["stderr"].get<std::string>().find("TypeError"), std::string::npos) << r;
}

TEST_F(WasmTierTest, NoHostInterfaceIsReachable) {
  nlohmann::json r = Run("javascript",
                         "console.log([typeof require, typeof process, typeof Deno, typeof fetch, typeof XMLHttpRequest, "
                         "typeof WebAssembly, typeof tools, typeof os, typeof read, typeof load].join(','))")
                         .result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["stdout"],
            "undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined\n");
}

TEST_F(WasmTierTest, AnEndlessLoopIsStoppedAtTheDeadline) {
  Outcome o = Run("javascript", "while (true) {}", "--timeout-ms 700");
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["status"], "timeout");
  EXPECT_LT(r["wall_ms"].get<int64_t>(), 5000);
}

TEST_F(WasmTierTest, AMemoryBombIsAMemoryLimit) {
  nlohmann::json r = Run("javascript", "let a = []; for (;;) a.push(new Array(1e6).fill(1));", "--memory-mb 128").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "memory_limit") << r;
}

TEST_F(WasmTierTest, DeepRecursionIsACatchableError) {
  nlohmann::json r = Run("javascript", "function f(n) { return f(n + 1) + 1; } try { f(0) } catch (e) { console.log('caught ' + e.name) }")
                         .result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["stdout"], "caught InternalError\n");
}

TEST_F(WasmTierTest, ALanguageWithoutTheTierIsAClearError) {
  const fs::path src = dir_ / "p.sh";
  std::ofstream(src) << "echo hi";
  const std::string cmd = kAirlock + " run --isolation wasm --lang bash " + src.string() + " 2>&1";
  const Outcome o = testing::RunCommandLine(cmd);
  const std::string& out = o.out;
  EXPECT_NE(o.rc, 0);
  EXPECT_NE(out.find("isolation \"wasm\" is not available for bash; available: native"), std::string::npos) << out;
}

TEST_F(WasmTierTest, NothingPersistsBetweenRuns) {
  nlohmann::json first = Run("javascript", "globalThis.leak = 1; console.log(typeof leak)").result();
  nlohmann::json second = Run("javascript", "console.log(typeof leak)").result();
  ASSERT_TRUE(first.is_object() && second.is_object());
  EXPECT_EQ(first["stdout"], "number\n");
  EXPECT_EQ(second["stdout"], "undefined\n");
}

// ---------------------------------------------------------------- C and C++ over WASI

class WasmTierCTest : public WasmTierTest {
 protected:
  void SetUp() override {
    WasmTierTest::SetUp();
    if (IsSkipped()) return;
    if (access("/usr/bin/clang-16", X_OK) != 0 || !fs::exists("/usr/lib/wasm32-wasi/libc.a")) {
      GTEST_SKIP() << "needs clang-16 and wasi-libc (scripts/wasm/install_toolchain.sh)";
    }
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
};

TEST_F(WasmTierCTest, HelloArgsStdinFilesAndExitCodes) {
  const std::string in = Write("stdin.txt", "line one\nline two\n");
  const std::string data = Write("data.txt", "21");
  Outcome o = Run("c", R"(#include <stdio.h>
#include <sys/stat.h>
int main(int argc, char** argv) {
  printf("argc=%d last=%s\n", argc, argv[argc - 1]);
  char line[64]; int lines = 0; while (fgets(line, sizeof line, stdin)) lines++;
  printf("stdin lines=%d\n", lines);
  FILE* f = fopen("data.txt", "r"); int x = 0; if (!f || fscanf(f, "%d", &x) != 1) return 9; fclose(f);
  mkdir("out", 0755);
  FILE* o = fopen("out/answer.txt", "w"); if (!o) { perror("out"); return 8; }
  fprintf(o, "%d\n", 2 * x); fclose(o);
  return 3;
})",
                  "--stdin " + in + " --file data.txt=" + data + " --arg hello --output 'out/*' --output-dir " +
                      (dir_ / "o").string());
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["isolation"], "wasm");
  EXPECT_EQ(r["stdout"], "argc=2 last=hello\nstdin lines=2\n") << r;
  EXPECT_EQ(r["status"], "exit_nonzero") << "the program's own exit(3) is not an engine limit";
  EXPECT_EQ(r["exit_code"], 3);
  ASSERT_EQ(r["files"].size(), 1u) << r;
  EXPECT_EQ(r["files"][0]["name"], "out/answer.txt");
  EXPECT_EQ(r["files"][0]["content"], "42\n");
}

TEST_F(WasmTierCTest, CompileErrorsComeBackLikeTheNativeTier) {
  nlohmann::json r = Run("c", "int main(void) { return undefined_name; }").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "compile_error");
  EXPECT_NE(r["compile_output"].get<std::string>().find("undefined_name"), std::string::npos) << r;
}

TEST_F(WasmTierCTest, CppWithTheStandardLibrary) {
  nlohmann::json r = Run("cpp", R"(#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>
int main() {
  std::vector<int> v{5, 3, 9, 1};
  std::sort(v.begin(), v.end());
  std::map<std::string, int> m{{"answer", 42}};
  for (int x : v) std::cout << x << ' ';
  std::cout << m["answer"] << std::endl;
})").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "ok") << r;
  EXPECT_EQ(r["stdout"], "1 3 5 9 42\n");
}

TEST_F(WasmTierCTest, TheHostIsNotThere) {
  nlohmann::json r = Run("c", R"(#include <stdio.h>
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <wasi/api.h>
int main(void) {
  const char* paths[] = {"/etc/passwd", "/proc/self/environ", "../../etc/passwd", "/work/../../etc/passwd",
                         "/usr/bin/python3"};
  for (int i = 0; i < 5; i++) {
    FILE* f = fopen(paths[i], "r");
    printf("%s:%s\n", paths[i], f ? "OPEN" : "no");
    if (f) fclose(f);
  }
  // "/" is the work directory itself: only the program's own files are there.
  DIR* d = opendir("/");
  struct dirent* e;
  while (d && (e = readdir(d))) printf("entry:%s\n", e->d_name);
  __wasi_fd_t fd = 0;
  printf("sock_accept: %s\n", __wasi_sock_accept(3, 0, &fd) == 0 ? "OPEN" : "no");
  printf("sock_shutdown: %s\n", __wasi_sock_shutdown(3, __WASI_SDFLAGS_RD) == 0 ? "OPEN" : "no");
  return 0;
})").result();
  ASSERT_TRUE(r.is_object());
  const std::string out = r["stdout"];
  EXPECT_EQ(out.find("OPEN"), std::string::npos) << out;
  EXPECT_NE(out.find("/etc/passwd:no"), std::string::npos) << r;
  EXPECT_NE(out.find("sock_accept: no"), std::string::npos) << r;
  EXPECT_NE(out.find("entry:main.c"), std::string::npos) << r;
  EXPECT_EQ(out.find("entry:etc"), std::string::npos) << r;
  EXPECT_EQ(out.find("entry:usr"), std::string::npos) << r;
}

TEST_F(WasmTierCTest, AnEndlessLoopIsATimeout) {
  nlohmann::json r = Run("c", "int main(void) { volatile int x = 0; for (;;) x++; }", "--timeout-ms 800").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "timeout") << r;
}

TEST_F(WasmTierCTest, MemoryCannotGrowPastTheLimit) {
  nlohmann::json r = Run("c", R"(#include <stdio.h>
#include <stdlib.h>
static char* volatile sink;
int main(void) {
  size_t total = 0;
  for (;;) {
    char* p = malloc(16 << 20);  // touched and kept, so the compiler cannot drop it
    if (!p) break;
    p[0] = p[(16 << 20) - 1] = 1;
    sink = p;
    total += 16 << 20;
  }
  printf("got %zu MiB then malloc failed\n", total >> 20);
  return 0;
})",
                         "--memory-mb 128")
                         .result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["status"], "ok") << r;
  const std::string out = r["stdout"];
  ASSERT_NE(out.find("then malloc failed"), std::string::npos) << r;
  EXPECT_LE(std::stoi(out.substr(4)), 128);
}

// A program that fails where its allocator ran out at the cap (malloc
// NULL, abort()) ends as memory_limit, as natively; one whose single huge
// request was refused far below the cap keeps its own exit status.
TEST_F(WasmTierCTest, FailingAtTheMemoryCapIsTheMemoryLimit) {
  nlohmann::json bomb = Run("c", R"(#include <stdlib.h>
#include <string.h>
static char* volatile sink;
int main(void) { for (;;) { char* p = malloc(1 << 24); if (!p) abort(); memset(p, 1, 1 << 24); sink = p; } })",
                            "--memory-mb 128")
                            .result();
  ASSERT_TRUE(bomb.is_object());
  EXPECT_EQ(bomb["status"], "memory_limit") << bomb;
  EXPECT_NE(bomb["stderr"].get<std::string>().find("reached its limit of 64 MiB"), std::string::npos) << bomb;
  nlohmann::json huge = Run("c", R"(#include <stdio.h>
#include <stdlib.h>
static void* volatile sink;
int main(void) { sink = malloc(1u << 30); if (!sink) { puts("refused"); return 1; } return 0; })",
                            "--memory-mb 128")
                            .result();
  ASSERT_TRUE(huge.is_object());
  EXPECT_EQ(huge["status"], "exit_nonzero") << huge;
  EXPECT_EQ(huge["stdout"], "refused\n");
}

TEST_F(WasmTierCTest, TrapsAndDeepRecursionEndCleanly) {
  nlohmann::json trap = Run("c", "int main(void) { __builtin_trap(); }").result();
  ASSERT_TRUE(trap.is_object());
  EXPECT_EQ(trap["status"], "exit_nonzero");
  EXPECT_NE(trap["stderr"].get<std::string>().find("wasm trap"), std::string::npos) << trap;
  nlohmann::json deep = Run("c", R"(int f(int n) { volatile char pad[256]; pad[0] = n; return f(n + 1) + pad[0]; }
int main(void) { return f(0); })").result();
  ASSERT_TRUE(deep.is_object());
  EXPECT_EQ(deep["status"], "exit_nonzero") << deep;
  EXPECT_NE(deep["stderr"].get<std::string>().find("wasm trap"), std::string::npos) << deep;
}

TEST_F(WasmTierCTest, SetjmpAndLongjmpWorkInCAndCpp) {
  // wasi-libc has no setjmp: airlock's kit (runtimes/wasm_setjmp_kit.h)
  // lowers it to WebAssembly exceptions. A jump out of three nested calls,
  // longjmp(env, 0) arriving as 1, more setjmps in one function than the
  // compiler's first table holds, a jump between two live buffers, and a
  // jump to a frame that has returned (undefined in C) ending as a trap.
  nlohmann::json c = Run("c", R"(#include <setjmp.h>
#include <stdio.h>
static jmp_buf top;
static int depth3(int n) { if (n == 3) longjmp(top, 42); return n; }
static int depth2(int n) { return depth3(n + 1) + 1; }
static int depth1(int n) { return depth2(n + 1) + 1; }
static jmp_buf zero;
int main(void) {
  volatile int rounds = 0;
  int v = setjmp(top);
  rounds++;
  if (v == 0) { depth1(1); puts("not reached"); return 1; }
  printf("jumped %d after %d rounds\n", v, rounds);
  if (!(v = setjmp(zero))) longjmp(zero, 0);
  printf("zero arrives as %d\n", v);
  jmp_buf many[9]; volatile int sum = 0;
  for (int i = 0; i < 9; ++i) { int w = setjmp(many[i]); if (w == 0) longjmp(many[i], i + 1); sum += w; }
  printf("sum %d\n", sum);
  return 0;
})").result();
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["status"], "ok") << c;
  EXPECT_EQ(c["stdout"], "jumped 42 after 2 rounds\nzero arrives as 1\nsum 45\n") << c;

  nlohmann::json cpp = Run("cpp", R"(#include <csetjmp>
#include <cstdio>
#include <string>
static std::jmp_buf env;
static void deep(int n) { if (n == 0) std::longjmp(env, 5); deep(n - 1); }
int main() {
  std::string s = "kept";
  if (int v = setjmp(env); v != 0) { std::printf("%s %d\n", s.c_str(), v); return 0; }
  deep(10);
  return 1;
})").result();
  ASSERT_TRUE(cpp.is_object());
  EXPECT_EQ(cpp["status"], "ok") << cpp;
  EXPECT_EQ(cpp["stdout"], "kept 5\n") << cpp;

  nlohmann::json dead = Run("c", R"(#include <setjmp.h>
static jmp_buf gone;
static int arm(void) { return setjmp(gone); }
int main(void) { if (arm() == 0) longjmp(gone, 1); return 0; })").result();
  ASSERT_TRUE(dead.is_object());
  EXPECT_EQ(dead["status"], "exit_nonzero") << dead;
  EXPECT_NE(dead["stderr"].get<std::string>().find("wasm trap: uncaught WebAssembly exception"), std::string::npos)
      << dead;
}

// ---------------------------------------------------------------- Python (CPython for wasm32-wasi)

class WasmTierPythonTest : public WasmTierTest {
 protected:
  void SetUp() override {
    WasmTierTest::SetUp();
    if (IsSkipped()) return;
    const char* env = getenv("AIRLOCK_WASM_CACHE");
    const std::string cache = env != nullptr ? env : "/var/cache/airlock/wasm";
    if (!fs::exists(cache + "/python/python.wasm")) {
      GTEST_SKIP() << "needs the CPython WASI build (scripts/wasm/build_python.sh)";
    }
  }
};

TEST_F(WasmTierPythonTest, StdlibBasicsArgsStdinAndFiles) {
  const fs::path in = dir_ / "in.txt";
  std::ofstream(in) << "3\n4\n";
  Outcome o = Run("python", R"(import json, re, math, sys, datetime
nums = [int(x) for x in sys.stdin.read().split()]
print(json.dumps({"hyp": math.hypot(*nums), "args": sys.argv[1:]}))
print(re.sub(r"a+", "-", "baaad"), datetime.date(2026, 12, 2).isoformat())
with open("result.txt", "w") as f:
    f.write("ok")
sys.exit(4)
)",
                  "--stdin " + in.string() + " --arg one --output result.txt --output-dir " + (dir_ / "o").string());
  nlohmann::json r = o.result();
  ASSERT_TRUE(r.is_object()) << o.out;
  EXPECT_EQ(r["isolation"], "wasm");
  EXPECT_EQ(r["stdout"], "{\"hyp\": 5.0, \"args\": [\"one\"]}\nb-d 2026-12-02\n") << r;
  EXPECT_EQ(r["exit_code"], 4);
  ASSERT_EQ(r["files"].size(), 1u) << r;
  EXPECT_EQ(r["files"][0]["content"], "ok");
}

TEST_F(WasmTierPythonTest, TheHostIsNotThere) {
  nlohmann::json r = Run("python", R"(import os, socket
seen = []
for p in ["/etc/passwd", "/proc/self/environ", "/usr/bin/python3", "../../etc/passwd"]:
    try:
        open(p).read(); seen.append(p)
    except OSError:
        pass
try:
    socket.socket(); seen.append("socket")
except Exception:
    pass
print("visible:", seen, "env:", sorted(k for k in os.environ if k not in ("PYTHONHOME", "PYTHONDONTWRITEBYTECODE")))
)").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["stdout"], "visible: [] env: []\n") << r;
}

// The standard library comes with its bytecode (scripts/wasm/build_python.sh):
// an import reads the .pyc instead of compiling the source in every run, and
// the code still names the file the guest sees, so tracebacks show the lines.
TEST_F(WasmTierPythonTest, TheStandardLibraryComesAsBytecode) {
  nlohmann::json r = Run("python", R"(import json, os, sys, traceback
print(os.path.exists(json.__spec__.cached), json.__spec__.cached)
print(json.decoder.JSONDecoder.decode.__code__.co_filename)
try:
    json.loads("{")
except ValueError:
    tb = traceback.format_exc()
    print("    obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n" in tb)
)").result();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["stdout"],
            "True /usr/lib/python3.11/json/__pycache__/__init__.cpython-311.pyc\n"
            "/usr/lib/python3.11/json/decoder.py\nTrue\n")
      << r;
}

TEST_F(WasmTierPythonTest, ErrorsAndTheDeadline) {
  nlohmann::json err = Run("python", "1/0").result();
  ASSERT_TRUE(err.is_object());
  EXPECT_EQ(err["status"], "exit_nonzero");
  EXPECT_NE(err["stderr"].get<std::string>().find("ZeroDivisionError"), std::string::npos) << err;
  nlohmann::json loop = Run("python", "while True: pass", "--timeout-ms 1500").result();
  ASSERT_TRUE(loop.is_object());
  EXPECT_EQ(loop["status"], "timeout") << loop;
}

}  // namespace
}  // namespace airlock
