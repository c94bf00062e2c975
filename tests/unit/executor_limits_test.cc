// Limits of LocalExecutor against a caller trying to exhaust the server:
// output files that claim more than they hold (sparse files), run shapes
// chosen to fill the jail pool, and the hints for files nobody asked for.
// Each test performs the attack through a real jail.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "jail/host.h"
#include "runtimes/language.h"
#include "runtimes/local_executor.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

class ExecutorLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(host).value();
  }

  std::unique_ptr<LocalExecutor> MakeExecutor(ExecutorLimits limits = {}) {
    auto ex = LocalExecutor::Create(*host_, limits);
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    return ex.ok() ? std::move(ex).value() : nullptr;
  }

  static RunRequest Python(const std::string& code) {
    RunRequest r;
    r.language = "python";
    r.code = code;
    r.timeout_ms = 20000;
    return r;
  }

  // Waits until the pool has made every jail it wants.
  static void Settle(const LocalExecutor& ex) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ex.pool()->stats().pending > 0 && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(ex.pool()->stats().pending, 0u) << "the pool did not refill";
  }

  std::unique_ptr<jail::JailHost> host_;
};

// The attack: four sparse 8 MiB files (no disk, no memory in the jail) asked
// for with "*.bin". Before the total cap every byte of all four was read and
// returned (32 MiB of zeros, ~85 MiB of JSON).
TEST_F(ExecutorLimitsTest, SparseOutputFilesAreCappedInTotal) {
  ExecutorLimits limits;
  limits.max_output_file_bytes = 8u << 20;
  limits.max_output_files_total_bytes = 10u << 20;
  auto ex = MakeExecutor(limits);
  ASSERT_NE(ex, nullptr);
  if (ex->Find("python") == nullptr) GTEST_SKIP() << "python not installed";
  RunRequest req = Python(
      "import os\n"
      "for i in range(4):\n"
      "    with open(f'f{i}.bin', 'wb') as f: f.truncate(8 << 20)\n"
      "print('made')\n");
  req.output_globs = {"*.bin"};
  CancelToken cancel;
  RunResult r = ex->Run(req, nullptr, cancel);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.stderr_text;
  uint64_t returned = 0;
  for (const OutputFile& f : r.files) returned += f.content.size();
  EXPECT_LE(returned, limits.max_output_files_total_bytes);
  EXPECT_EQ(r.files.size(), 1u) << "one whole 8 MiB file fits in 10 MiB, a second does not";
  EXPECT_TRUE(r.files_truncated);
  ASSERT_EQ(r.files_skipped.size(), 3u);
  for (const FileNotice& n : r.files_skipped) {
    EXPECT_EQ(n.reason, "max_output_files_total_bytes") << n.name;
    EXPECT_EQ(n.size, 8u << 20) << n.name;
  }
  bool noted = false;
  for (const std::string& n : r.notes) noted = noted || n.find("files_skipped") != std::string::npos;
  EXPECT_TRUE(noted) << "a note points at files_skipped";
  // The JSON result stays bounded too (base64 of ~8 MiB, not of 32).
  EXPECT_LT(ToJson(r).dump().size(), 12u << 20);
}

TEST_F(ExecutorLimitsTest, OutputFilesPastTheCountAreListedAsSkipped) {
  ExecutorLimits limits;
  limits.max_output_files = 2;
  auto ex = MakeExecutor(limits);
  ASSERT_NE(ex, nullptr);
  if (ex->Find("python") == nullptr) GTEST_SKIP() << "python not installed";
  RunRequest req = Python("for i in range(5): open(f'o{i}.txt', 'w').write('x')\n");
  req.output_globs = {"*.txt"};
  CancelToken cancel;
  RunResult r = ex->Run(req, nullptr, cancel);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.stderr_text;
  EXPECT_EQ(r.files.size(), 2u);
  EXPECT_TRUE(r.files_truncated);
  ASSERT_EQ(r.files_skipped.size(), 3u);
  EXPECT_EQ(r.files_skipped[0].reason, "max_output_files");
}

// A new user's program writes plot.png without output_files; another asks
// for "*.csv" that it never writes. Both are told.
TEST_F(ExecutorLimitsTest, FilesNobodyAskedForAndPatternsThatMatchNothingAreReported) {
  auto ex = MakeExecutor();
  ASSERT_NE(ex, nullptr);
  if (ex->Find("python") == nullptr) GTEST_SKIP() << "python not installed";
  RunRequest req = Python("open('plot.png', 'wb').write(b'\\x89PNG' + b'0' * 96)\n");
  req.files = {{"input.txt", "in"}};
  req.output_globs = {"*.csv"};
  CancelToken cancel;
  RunResult r = ex->Run(req, nullptr, cancel);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.stderr_text;
  EXPECT_TRUE(r.files.empty());
  EXPECT_FALSE(r.files_truncated);
  ASSERT_EQ(r.files_left.size(), 1u) << "the source and input files are not listed";
  EXPECT_EQ(r.files_left[0].name, "plot.png");
  EXPECT_EQ(r.files_left[0].size, 100u);
  bool pattern = false, left = false;
  for (const std::string& n : r.notes) {
    pattern = pattern || n.find("\"*.csv\" matched no file") != std::string::npos;
    left = left || n.find("files_left") != std::string::npos;
  }
  EXPECT_TRUE(pattern) << ToJson(r).dump();
  EXPECT_TRUE(left) << ToJson(r).dump();

  // Many files left: the list stays bounded.
  RunRequest many = Python("for i in range(500): open(f'x{i}.dat', 'w').write('1')\n");
  RunResult m = ex->Run(many, nullptr, cancel);
  ASSERT_EQ(m.status, RunStatus::kOk) << m.message;
  EXPECT_LE(m.files_left.size(), 20u);
  EXPECT_GE(m.files_left.size(), 10u);
}

// The attack: 40 runs, each with a memory_mb of its own. Before, each made a
// pool shape of its own (4 metric series each) and the refills for those
// one-off shapes took the pool's room, so default runs went cold. Now only
// the languages' default shapes are pooled.
TEST_F(ExecutorLimitsTest, DistinctMemoryLimitsNeitherAddPoolShapesNorStarveDefaultRuns) {
  auto ex = MakeExecutor();
  ASSERT_NE(ex, nullptr);
  if (ex->Find("python") == nullptr) GTEST_SKIP() << "python not installed";
  ex->EnablePool({.max_per_shape = 4, .min_per_shape = 1, .max_total = 4}, {"python"}, /*prestart=*/true);
  Settle(*ex);
  const size_t shapes_before = ex->pool()->stats().shapes.size();
  CancelToken cancel;
  for (int i = 0; i < 40; ++i) {
    RunRequest req = Python("print('odd')");
    req.memory_mb = 200 + static_cast<uint64_t>(i);
    RunResult r = ex->Run(req, nullptr, cancel);
    ASSERT_EQ(r.status, RunStatus::kOk) << i << ": " << r.message << r.stderr_text;
  }
  Settle(*ex);
  EXPECT_EQ(ex->pool()->stats().shapes.size(), shapes_before) << ex->Health().dump();
  EXPECT_LE(ex->Health()["pool"]["shapes"].size(), 2u);

  // Default runs are still served from the pool.
  const uint64_t hits0 = ex->pool()->stats().hits;
  const uint64_t pre0 = ex->prestarted_runs();
  for (int i = 0; i < 4; ++i) {
    Settle(*ex);
    RunResult r = ex->Run(Python("print('default')"), nullptr, cancel);
    ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  }
  EXPECT_EQ(ex->pool()->stats().hits, hits0 + 4) << ex->Health().dump();
  EXPECT_EQ(ex->prestarted_runs(), pre0 + 4);
}

}  // namespace
}  // namespace airlock::runtimes
