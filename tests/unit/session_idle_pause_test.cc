// LocalExecutor's idle pauser (ExecutorLimits::pause_after_s, config
// sessions.pause_after_s): a WASM-tier Python session idle that long is
// paused by the executor itself (no engine runs, its image is in the
// executor's private image directory), its next cell restores it whole,
// and destroying the executor removes the directory with what is in it.
// Skipped where the CPython WASI session build is not cached.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "jail/host.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "session_test_util.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

using Clock = std::chrono::steady_clock;

// Waits (bounded) until the executor reports `n` paused sessions.
bool PausedSettle(LocalExecutor& executor, size_t n, std::chrono::seconds within) {
  const auto end = Clock::now() + within;
  while (executor.Health()["paused_sessions"].get<size_t>() != n) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

TEST(SessionIdlePauseTest, AnIdleSessionIsPausedAndItsNextCellRestoresIt) {
  auto host = tests::CreateJailHost();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  std::vector<LanguageSpec> languages = BuiltinLanguages();
  for (LanguageSpec& l : WasmTierLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js", DefaultWasmCacheDir())) {
    languages.push_back(std::move(l));
  }
  auto created = LocalExecutor::Create(**host, {.pause_after_s = 1}, std::move(languages));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<LocalExecutor> executor = std::move(created).value();
  const LanguageSpec* py = executor->Find("python", false, "wasm");
  if (py == nullptr || !py->session_checkpoints) {
    GTEST_SKIP() << "no CPython WASI session reactor (scripts/wasm/build_python.sh)";
  }

  const std::string idle = sessiontest::OpenTestSession(*executor, "idle", "python", "wasm", 0);
  const std::string native = sessiontest::OpenTestSession(*executor, "idle_native", "python", "native", 0);
  ASSERT_EQ(sessiontest::RunCell(*executor, idle, "kept = [1, 2]\nprint('ok')", 20'000).stdout_text, "ok\n");
  const std::string dir = executor->session_image_dir();
  ASSERT_FALSE(dir.empty()) << "a session that can be paused makes the image directory";
  struct stat st{};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  ASSERT_TRUE(PausedSettle(*executor, 1, std::chrono::seconds(20))) << executor->Health().dump();
  EXPECT_EQ(FilesIn(dir), 1u) << "the paused session's image";
  EXPECT_EQ(executor->Health()["sessions"], 2) << "a paused session is still open";

  // The next cell brings it back, state and all; the native one was never touched.
  RunResult r = sessiontest::RunCell(*executor, idle, "kept.append(3)\nprint(kept)", 20'000);
  EXPECT_EQ(r.stdout_text, "[1, 2, 3]\n") << r.stderr_text << r.message;
  EXPECT_EQ(FilesIn(dir), 0u) << "a restored session's image is deleted";
  EXPECT_EQ(sessiontest::RunCell(*executor, native, "print(7)", 20'000).stdout_text, "7\n");

  // Paused again, then the executor goes: the directory and the image with it.
  ASSERT_TRUE(PausedSettle(*executor, 1, std::chrono::seconds(20))) << executor->Health().dump();
  const auto t0 = Clock::now();
  executor.reset();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10)) << "the pauser must stop at once";
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace airlock::runtimes
