// The WASM tier's engine asks glibc for transparent huge pages: its
// environment carries GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (with the
// largest mmap_threshold, so its large chunks come from huge-page-aligned
// arena heaps) and its jail the
// two sysfs files glibc reads the THP mode from. A pool's pre-started
// CPython, started in a real jail, holds huge pages while it starts; the
// same jail without those two files holds none (glibc then sees no THP).
// Skipped where THP is off ("[never]") or CPython for WASI is not built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jail/host.h"
#include "runtimes/local_executor.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool DescendsFromUs(pid_t pid) {
  static const std::regex ppid_re(R"(PPid:\s+(\d+))");
  for (int depth = 0; depth < 16 && pid > 1; ++depth) {
    std::smatch m;
    const std::string status = ReadAll("/proc/" + std::to_string(pid) + "/status");
    if (!std::regex_search(status, m, ppid_re)) return false;
    pid = static_cast<pid_t>(std::stol(m[1]));
    if (pid == getpid()) return true;
  }
  return false;
}

// The most AnonHugePages (KiB) any of this process's WASM CPython engines
// held while the pool started `jails` of them.
uint64_t HugePagesWhileCPythonStarts(std::vector<LanguageSpec> languages) {
  auto host = tests::CreateJailHost();
  if (!host.ok()) return 0;
  auto executor = LocalExecutor::Create(**host, {}, std::move(languages));
  if (!executor.ok()) return 0;
  (*executor)->EnablePool({.max_per_shape = 1, .min_per_shape = 1, .max_total = 1}, {"python:wasm"}, true);
  static const std::regex huge_re(R"(AnonHugePages:\s+(\d+) kB)");
  uint64_t most = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(6);
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename();
      if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
      if (ReadAll(e.path() / "cmdline").find("python.wasm") == std::string::npos) continue;
      if (!DescendsFromUs(static_cast<pid_t>(std::stol(name)))) continue;
      std::smatch m;
      const std::string rollup = ReadAll(e.path() / "smaps_rollup");
      if (std::regex_search(rollup, m, huge_re)) most = std::max<uint64_t>(most, std::stoull(m[1]));
    }
    if (most > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return most;
}

TEST(WasmHugePages, APreStartedCPythonInItsJailUsesHugePagesThroughTheSysfsFiles) {
  if (ReadAll("/sys/kernel/mm/transparent_hugepage/enabled").find("[never]") != std::string::npos ||
      !fs::exists("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")) {
    GTEST_SKIP() << "transparent huge pages are off on this host";
  }
  std::vector<LanguageSpec> wasm =
      WasmTierLanguages(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js", DefaultWasmCacheDir());
  auto py = std::find_if(wasm.begin(), wasm.end(), [](const LanguageSpec& l) { return l.name == "python"; });
  if (py == wasm.end()) GTEST_SKIP() << "no CPython for WASI in " << DefaultWasmCacheDir();
  EXPECT_NE(std::find(py->extra_env.begin(), py->extra_env.end(), "GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432"),
            py->extra_env.end());

  EXPECT_GE(HugePagesWhileCPythonStarts({*py}), 2048u) << "no huge page in the jail";

  LanguageSpec without_sysfs = *py;
  std::erase_if(without_sysfs.binds,
                [](const jail::BindMount& b) { return b.path.rfind("/sys/kernel/mm/transparent_hugepage/", 0) == 0; });
  ASSERT_EQ(without_sysfs.binds.size() + 2, py->binds.size());
  EXPECT_EQ(HugePagesWhileCPythonStarts({without_sysfs}), 0u) << "huge pages without the sysfs files: the test shows nothing";
}

}  // namespace
}  // namespace airlock::runtimes
