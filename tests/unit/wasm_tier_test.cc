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

namespace airlock {
namespace {

namespace fs = std::filesystem;
const std::string kAirlock = std::string(AIRLOCK_BINARY_DIR) + "/airlock";

struct Outcome {
  int rc = -1;
  std::string out;  // stdout (JSON with --json)
  nlohmann::json result() const { return nlohmann::json::parse(out, nullptr, false); }
};

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
    FILE* p = popen(cmd.c_str(), "r");
    Outcome o;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
    const int status = pclose(p);
    o.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
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
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_NE(out.find("isolation \"wasm\" is not available for bash; available: native"), std::string::npos) << out;
}

TEST_F(WasmTierTest, NothingPersistsBetweenRuns) {
  nlohmann::json first = Run("javascript", "globalThis.leak = 1; console.log(typeof leak)").result();
  nlohmann::json second = Run("javascript", "console.log(typeof leak)").result();
  ASSERT_TRUE(first.is_object() && second.is_object());
  EXPECT_EQ(first["stdout"], "number\n");
  EXPECT_EQ(second["stdout"], "undefined\n");
}

}  // namespace
}  // namespace airlock
