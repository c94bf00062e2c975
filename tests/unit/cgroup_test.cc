#include "jail/cgroup.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "jail/cgroup_fs.h"
#include "jail/cgroup_probe.h"

namespace airlock::jail {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMiB = 1ull << 20;

bool DirExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

// Number of processes listed in <dir>/cgroup.procs.
size_t ProcsIn(const std::string& dir) {
  std::istringstream in(Slurp(dir + "/cgroup.procs"));
  size_t n = 0;
  for (std::string word; in >> word;) ++n;
  return n;
}

// A forked child that blocks on a pipe before running `body`, so the parent
// can move it into a cgroup first. The child's exit status is body()'s result.
class GatedChild {
 public:
  explicit GatedChild(std::function<int()> body) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) std::abort();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[1]);
      char c;
      if (::read(fds[0], &c, 1) != 1) ::_exit(99);
      ::_exit(body());
    }
    ::close(fds[0]);
    gate_ = fds[1];
  }
  ~GatedChild() {
    if (gate_ >= 0) ::close(gate_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void Release() {
    ASSERT_EQ(::write(gate_, "x", 1), 1);
    ::close(gate_);
    gate_ = -1;
  }
  // The wait status, or -1 if the child is still running after `timeout`.
  int Wait(milliseconds timeout = milliseconds(30'000)) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      if (Clock::now() >= deadline) return -1;
      std::this_thread::sleep_for(milliseconds(5));
    }
  }

 private:
  pid_t pid_ = -1;
  int gate_ = -1;
};

uint64_t ProcessCpuNs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

int SpinCpu(uint64_t ns) {
  const uint64_t start = ProcessCpuNs();
  volatile uint64_t x = 0;
  while (ProcessCpuNs() - start < ns) x = x + 1;
  return 0;
}

// ------------------------------------------------------------ pure parsing

constexpr char kHybridMountInfo[] =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr char kHybridProcCgroup[] =
    "9:name=systemd:/\n8:pids:/\n6:freezer:/\n4:memory:/process_api/abc\n2:cpuacct:/\n1:cpu:/\n0::/\n";

TEST(CgroupProbeTest, HybridLayout) {
  cgroup_probe::HostLayout l = cgroup_probe::FindLayout(kHybridMountInfo, kHybridProcCgroup);
  EXPECT_EQ(l.v2_dir, "/sys/fs/cgroup/unified");
  EXPECT_EQ(l.v2_mount, "/sys/fs/cgroup/unified");
  EXPECT_EQ(l.v1_memory, "/sys/fs/cgroup/memory/process_api/abc");
  EXPECT_EQ(l.v1_pids, "/sys/fs/cgroup/pids");
  EXPECT_EQ(l.v1_cpu, "/sys/fs/cgroup/cpu");
  EXPECT_EQ(l.v1_cpuacct, "/sys/fs/cgroup/cpuacct");
  EXPECT_EQ(l.v1_freezer, "/sys/fs/cgroup/freezer");
}

TEST(CgroupProbeTest, PureV2WithOptionalFields) {
  const char* mountinfo =
      "25 20 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
      "rw,nsdelegate,memory_recursiveprot\n";
  const char* proc = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-u7.scope\n";
  cgroup_probe::HostLayout l = cgroup_probe::FindLayout(mountinfo, proc);
  EXPECT_EQ(l.v2_dir, "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-u7.scope");
  EXPECT_TRUE(l.v1_memory.empty());
  EXPECT_TRUE(l.v1_pids.empty());
}

TEST(CgroupProbeTest, CombinedCpuCpuacctAndContainerMountRoot) {
  // A container that sees only its own part of the hierarchy (mount root is
  // not "/"), a combined cpu,cpuacct hierarchy and an escaped mount point.
  const char* mountinfo =
      "50 40 0:40 /docker/c1 /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
      "51 40 0:41 /docker/c1 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "52 40 0:42 /docker/c1 /my\\040cgroups/pids rw - cgroup cgroup rw,pids\n"
      "53 40 0:43 /elsewhere /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
  const char* proc = "5:cpu,cpuacct:/docker/c1\n4:memory:/docker/c1/sub\n3:pids:/docker/c1\n0::/docker/c1\n";
  cgroup_probe::HostLayout l = cgroup_probe::FindLayout(mountinfo, proc);
  EXPECT_EQ(l.v1_cpu, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(l.v1_cpuacct, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(l.v1_memory, "/sys/fs/cgroup/memory/sub");
  EXPECT_EQ(l.v1_pids, "/my cgroups/pids");
  EXPECT_EQ(l.v2_dir, "");  // the v2 mount does not show our cgroup
  EXPECT_EQ(l.v1_freezer, "");
}

TEST(CgroupProbeTest, ProbePrintsReport) {
  CgroupReport r = CgroupManager::Probe();
  const char* mode = r.mode == CgroupMode::kV2 ? "v2" : r.mode == CgroupMode::kV1 ? "v1" : "none";
  std::cout << "cgroup mode=" << mode << " memory=" << r.memory << " memory_swap=" << r.memory_swap
            << " pids=" << r.pids << " cpu=" << r.cpu << "\n  " << r.detail << "\n";
  EXPECT_FALSE(r.detail.empty());
  if (r.mode != CgroupMode::kNone) {
    EXPECT_TRUE(r.memory);
    EXPECT_TRUE(r.pids);
  } else {
    EXPECT_NE(r.detail.find("Fix:"), std::string::npos);
  }
}

// ------------------------------------------------------------ on this host

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CgroupReport report = CgroupManager::Probe();
    if (report.mode == CgroupMode::kNone) GTEST_SKIP() << "no usable cgroups: " << report.detail;
    StatusOr<std::unique_ptr<CgroupManager>> manager = CgroupManager::Create();
    ASSERT_TRUE(manager.ok()) << manager.status().ToString();
    manager_ = std::move(manager).value();
  }

  std::unique_ptr<Cgroup> Make(const std::string& name, uint64_t memory_bytes = 32 * kMiB, uint32_t pids = 8,
                               uint32_t cpu_percent = 100) {
    CgroupLimits limits;
    limits.memory_bytes = memory_bytes;
    limits.max_pids = pids;
    limits.cpu_quota_percent = cpu_percent;
    StatusOr<std::unique_ptr<Cgroup>> cg = manager_->CreateCgroup(name, limits);
    EXPECT_TRUE(cg.ok()) << cg.status().ToString();
    return cg.ok() ? std::move(cg).value() : nullptr;
  }

  // Forks `body` into `cg` and returns its wait status.
  int RunInside(Cgroup& cg, std::function<int()> body) {
    GatedChild child(std::move(body));
    Status added = cg.AddProcess(child.pid());
    EXPECT_TRUE(added.ok()) << added.ToString();
    if (!added.ok()) return -1;
    child.Release();
    return child.Wait();
  }

  std::unique_ptr<CgroupManager> manager_;
};

TEST_F(CgroupTest, LimitsAreWritten) {
  auto cg = Make("limits", 32 * kMiB, 8, 50);
  ASSERT_NE(cg, nullptr);
  ASSERT_FALSE(cg->paths().empty());
  const bool v2 = manager_->report().mode == CgroupMode::kV2;
  EXPECT_EQ(v2, cg->v2_dir_fd() >= 0);
  // The first file of each name found among the hierarchies.
  auto read = [&](const std::string& file) {
    for (const std::string& p : cg->paths()) {
      if (std::ifstream(p + "/" + file)) return Slurp(p + "/" + file);
    }
    return std::string("(missing)");
  };
  EXPECT_EQ(read(v2 ? "memory.max" : "memory.limit_in_bytes"), std::to_string(32 * kMiB) + "\n");
  EXPECT_EQ(read("pids.max"), "8\n");
  // Swap off: v2 memory.swap.max = 0, v1 memory+swap = memory.
  const std::string swap = read(v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes");
  if (swap != "(missing)") {
    EXPECT_EQ(swap, v2 ? "0\n" : std::to_string(32 * kMiB) + "\n");
  }
  if (manager_->report().cpu) {
    EXPECT_EQ(read(v2 ? "cpu.max" : "cpu.cfs_quota_us"), v2 ? "50000 100000\n" : "50000\n");
  }
}

TEST_F(CgroupTest, MemoryBombIsOomKilled) {
  auto cg = Make("membomb");
  ASSERT_NE(cg, nullptr);
  int status = RunInside(*cg, [] {
    for (int i = 0; i < 200; ++i) {
      char* p = static_cast<char*>(std::malloc(kMiB));
      if (p == nullptr) return 3;
      std::memset(p, i + 1, kMiB);
      asm volatile("" : : "r"(p) : "memory");  // keep the allocation
    }
    return 0;
  });
  ASSERT_NE(status, -1) << "memory bomb still running";
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  CgroupStats stats = cg->Stats();
  EXPECT_GT(stats.oom_kills, 0u);
  EXPECT_GE(stats.peak_memory_bytes, 20 * kMiB);
  EXPECT_LE(stats.peak_memory_bytes, 40 * kMiB);
}

TEST_F(CgroupTest, ForkBombHitsPidsLimit) {
  auto cg = Make("forkbomb");
  ASSERT_NE(cg, nullptr);
  int status = RunInside(*cg, [] {
    std::vector<pid_t> kids;
    int result = 1;  // limit never hit
    for (int i = 0; i < 64; ++i) {
      pid_t p = ::fork();
      if (p == 0) {
        ::pause();
        ::_exit(0);
      }
      if (p < 0) {
        result = errno == EAGAIN ? 0 : 2;
        break;
      }
      kids.push_back(p);
    }
    for (pid_t k : kids) ::kill(k, SIGKILL);
    for (pid_t k : kids) ::waitpid(k, nullptr, 0);
    return result == 0 ? 100 + static_cast<int>(kids.size()) : result;
  });
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  // pids.max = 8: the child itself plus 7 forks, then EAGAIN.
  EXPECT_EQ(WEXITSTATUS(status), 107);
  EXPECT_TRUE(cg->Stats().pids_limit_hit);
}

TEST_F(CgroupTest, KillAllKillsChildAndGrandchild) {
  auto cg = Make("killall");
  ASSERT_NE(cg, nullptr);
  EXPECT_FALSE(cg->Stats().pids_limit_hit);
  GatedChild child([] {
    if (::fork() == 0) {  // grandchild: not ours to wait for
      ::sleep(60);
      ::_exit(0);
    }
    ::sleep(60);
    return 0;
  });
  ASSERT_TRUE(cg->AddProcess(child.pid()).ok());
  child.Release();
  const std::string& dir = cg->paths().front();
  const auto deadline = Clock::now() + milliseconds(5000);
  while (ProcsIn(dir) < 2 && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(2));
  ASSERT_EQ(ProcsIn(dir), 2u);

  const auto start = Clock::now();
  Status killed = cg->KillAll();
  EXPECT_TRUE(killed.ok()) << killed.ToString();
  int status = child.Wait(milliseconds(5000));
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  for (const std::string& p : cg->paths()) EXPECT_EQ(ProcsIn(p), 0u) << p;
}

TEST_F(CgroupTest, CpuUsageIsCounted) {
  auto cg = Make("cpu");
  ASSERT_NE(cg, nullptr);
  int status = RunInside(*cg, [] { return SpinCpu(300'000'000); });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  uint64_t used = cg->Stats().cpu_usage_ns;
  EXPECT_GE(used, 200'000'000u);
  EXPECT_LT(used, 5'000'000'000u);
}

TEST_F(CgroupTest, CpuQuotaThrottles) {
  if (!manager_->report().cpu) GTEST_SKIP() << "no cpu controller";
  auto cg = Make("cpuquota", 32 * kMiB, 8, 25);
  ASSERT_NE(cg, nullptr);
  const auto start = Clock::now();
  int status = RunInside(*cg, [] { return SpinCpu(150'000'000); });
  const auto wall = Clock::now() - start;
  ASSERT_TRUE(WIFEXITED(status));
  // 150 ms of CPU at 25 ms per 100 ms period takes about 500 ms.
  EXPECT_GE(wall, milliseconds(350));
}

TEST_F(CgroupTest, NothingLeftBehind) {
  auto cg = Make("cleanup");
  ASSERT_NE(cg, nullptr);
  std::vector<std::string> paths = cg->paths();
  std::set<std::string> parents;
  for (const std::string& p : paths) {
    EXPECT_TRUE(DirExists(p)) << p;
    parents.insert(Parent(p));
  }
  // A live process inside: destroying the Cgroup must kill it.
  GatedChild child([] {
    ::sleep(60);
    return 0;
  });
  ASSERT_TRUE(cg->AddProcess(child.pid()).ok());
  child.Release();
  cg.reset();
  int status = child.Wait(milliseconds(5000));
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  for (const std::string& p : paths) EXPECT_FALSE(DirExists(p)) << p;
  for (const std::string& p : parents) EXPECT_TRUE(DirExists(p)) << p;
  manager_.reset();
  for (const std::string& p : parents) EXPECT_FALSE(DirExists(p)) << p;
}

TEST_F(CgroupTest, BadNamesRejected) {
  CgroupLimits limits;
  for (const std::string& name : {std::string(), std::string("."), std::string(".."), std::string("../x"),
                                  std::string("a/b"), std::string("a b"), std::string("x\n"), std::string(65, 'a')}) {
    StatusOr<std::unique_ptr<Cgroup>> cg = manager_->CreateCgroup(name, limits);
    ASSERT_FALSE(cg.ok()) << "accepted '" << name << "'";
    EXPECT_EQ(cg.status().code(), StatusCode::kInvalidArgument);
  }
  auto ok = manager_->CreateCgroup("Run_1-a", limits);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  auto dup = manager_->CreateCgroup("Run_1-a", limits);
  EXPECT_FALSE(dup.ok());
  EXPECT_TRUE(DirExists((*ok)->paths().front()));  // the failed duplicate removed nothing
}

TEST_F(CgroupTest, ConcurrentCreation) {
  constexpr int kThreads = 4, kEach = 5;
  std::vector<std::unique_ptr<Cgroup>> made(kThreads * kEach);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto cg = manager_->CreateCgroup("c" + std::to_string(t) + "_" + std::to_string(i), CgroupLimits());
        if (cg.ok()) made[t * kEach + i] = std::move(cg).value();
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> dirs;
  for (auto& cg : made) {
    ASSERT_NE(cg, nullptr);
    dirs.insert(cg->paths().front());
  }
  EXPECT_EQ(dirs.size(), size_t{kThreads * kEach});
}

// A supervisor that died without cleaning up leaves airlock-<pid>; the next
// manager removes it and kills the leaked process inside.
TEST(CgroupSweepTest, StaleTreeOfDeadSupervisorIsRemoved) {
  CgroupReport report = CgroupManager::Probe();
  if (report.mode == CgroupMode::kNone) GTEST_SKIP() << report.detail;
  cgroup_probe::HostLayout layout =
      cgroup_probe::FindLayout(Slurp("/proc/self/mountinfo"), Slurp("/proc/self/cgroup"));
  const std::string dir = report.mode == CgroupMode::kV2 ? layout.v2_dir : layout.v1_pids;
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const std::string stale = dir + "/airlock-" + std::to_string(dead);
  ASSERT_EQ(::mkdir(stale.c_str(), 0755), 0) << stale << ": " << std::strerror(errno);
  ASSERT_EQ(::mkdir((stale + "/jail-1").c_str(), 0755), 0);
  GatedChild leaked([] {
    ::sleep(60);
    return 0;
  });
  ASSERT_TRUE(cgroup_fs::WriteFile(stale + "/jail-1/cgroup.procs", std::to_string(leaked.pid())).ok());
  leaked.Release();

  StatusOr<std::unique_ptr<CgroupManager>> manager = CgroupManager::Create();
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();
  EXPECT_FALSE(DirExists(stale));
  int status = leaked.Wait(milliseconds(5000));
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  (void)cgroup_fs::RemoveTree(stale, Clock::now() + milliseconds(1000));  // if the check failed
}

// ------------------------------------------------------------ v2 layout

bool HasWord(const std::string& text, const std::string& word) {
  std::vector<std::string> words = cgroup_fs::SplitWords(text);
  return std::find(words.begin(), words.end(), word) != words.end();
}

// Runs in a forked "supervisor" that sits in the non-root v2 cgroup `own`:
// the manager must move it into a leaf, enable `controller` below `own`,
// make run cgroups usable (AddProcess, clone3 into the fd, cgroup.kill) and
// undo everything. Returns 0 or 1 after printing what failed.
int V2LayoutScenario(const std::string& own, const std::string& controller) {
#define V2_CHECK(cond)                                                                   \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "v2 scenario line %d: check failed: %s\n", __LINE__, #cond); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)
  const std::string pid = std::to_string(::getpid());
  const std::string own_rel = own.substr(own.rfind('/'));
  V2_CHECK(cgroup_fs::WriteFile(own + "/cgroup.procs", pid).ok());
  V2_CHECK(HasWord(Slurp("/proc/self/cgroup"), "0::" + own_rel));
  const std::string sup = own + "/airlock-" + pid + "-supervisor";
  const std::string parent = own + "/airlock-" + pid;
  std::string run;
  {
    StatusOr<std::unique_ptr<CgroupManager>> m = CgroupManager::CreateV2ForTesting(own, {controller});
    if (!m.ok()) std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
    V2_CHECK(m.ok());
    V2_CHECK(DirExists(sup));
    V2_CHECK(HasWord(Slurp("/proc/self/cgroup"), "0::" + own_rel + "/airlock-" + pid + "-supervisor"));
    V2_CHECK(HasWord(Slurp(own + "/cgroup.subtree_control"), controller));
    V2_CHECK(HasWord(Slurp(parent + "/cgroup.subtree_control"), controller));
    StatusOr<std::unique_ptr<Cgroup>> cg = (*m)->CreateCgroup("run", CgroupLimits());
    if (!cg.ok()) std::fprintf(stderr, "%s\n", cg.status().ToString().c_str());
    V2_CHECK(cg.ok());
    V2_CHECK((*cg)->paths() == std::vector<std::string>{parent + "/run"});
    run = (*cg)->paths().front();
    V2_CHECK(HasWord(Slurp(run + "/cgroup.controllers"), controller));
    V2_CHECK((*cg)->v2_dir_fd() >= 0);

    // clone3(CLONE_INTO_CGROUP) with the directory fd.
    struct clone_args args = {};
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<uint64_t>((*cg)->v2_dir_fd());
    long cloned = ::syscall(SYS_clone3, &args, sizeof(args));
    if (cloned == 0) ::_exit(HasWord(Slurp("/proc/self/cgroup"), "0::" + own_rel + "/airlock-" + pid + "/run") ? 0 : 1);
    V2_CHECK(cloned > 0);
    int status = 0;
    V2_CHECK(::waitpid(static_cast<pid_t>(cloned), &status, 0) == cloned);
    V2_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    // KillAll (cgroup.kill) reaches a grandchild too.
    GatedChild child([] {
      if (::fork() == 0) {
        ::sleep(60);
        ::_exit(0);
      }
      ::sleep(60);
      return 0;
    });
    V2_CHECK((*cg)->AddProcess(child.pid()).ok());
    child.Release();
    const auto deadline = Clock::now() + milliseconds(5000);
    while (ProcsIn(run) < 2 && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(2));
    V2_CHECK(ProcsIn(run) == 2);
    V2_CHECK((*cg)->KillAll().ok());
    status = child.Wait(milliseconds(5000));
    V2_CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    V2_CHECK(HasWord(Slurp(run + "/cgroup.events"), "populated") && ProcsIn(run) == 0);

    // Destroying the Cgroup kills what is inside and removes the directory.
    GatedChild sleeper([] {
      ::sleep(60);
      return 0;
    });
    V2_CHECK((*cg)->AddProcess(sleeper.pid()).ok());
    sleeper.Release();
    cg->reset();
    status = sleeper.Wait(milliseconds(5000));
    V2_CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    V2_CHECK(!DirExists(run));
  }
  // The manager is gone: parent and leaf removed, we are back, controller off.
  V2_CHECK(!DirExists(parent));
  V2_CHECK(!DirExists(sup));
  V2_CHECK(HasWord(Slurp("/proc/self/cgroup"), "0::" + own_rel));
  V2_CHECK(!HasWord(Slurp(own + "/cgroup.subtree_control"), controller));
  return 0;
#undef V2_CHECK
}

// On hosts whose unified hierarchy lacks memory/pids (hybrid v1+v2), the v2
// layout is still exercised with whatever controller it has (e.g. hugetlb).
TEST(CgroupV2LayoutTest, SupervisorLeafKillAndCleanup) {
  if (CgroupManager::Probe().mode == CgroupMode::kV2) GTEST_SKIP() << "real cgroup v2: covered by CgroupTest";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  cgroup_probe::HostLayout layout =
      cgroup_probe::FindLayout(Slurp("/proc/self/mountinfo"), Slurp("/proc/self/cgroup"));
  if (layout.v2_dir.empty() || layout.v2_dir != layout.v2_mount) GTEST_SKIP() << "not at a cgroup2 root";
  const std::string root = layout.v2_dir;
  // Serialize with other test processes: they share the root subtree_control.
  UniqueFd lock(::open("/tmp/airlock-cgroup-v2-test.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(lock.valid()) << std::strerror(errno);
  ASSERT_EQ(::flock(lock.get(), LOCK_EX), 0);
  std::vector<std::string> controllers = cgroup_fs::SplitWords(Slurp(root + "/cgroup.controllers"));
  if (controllers.empty()) GTEST_SKIP() << "no controller in " << root;
  const std::string controller = controllers.front();
  bool enabled_at_root = false;
  if (!HasWord(Slurp(root + "/cgroup.subtree_control"), controller)) {
    ASSERT_TRUE(cgroup_fs::WriteFile(root + "/cgroup.subtree_control", "+" + controller).ok());
    enabled_at_root = true;
  }
  const std::string own = root + "/airlock-v2test-" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(own.c_str(), 0755), 0) << std::strerror(errno);
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(V2LayoutScenario(own, controller));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // Whatever the scenario left (it should leave nothing): kill and remove.
  const bool leftovers = cgroup_fs::ReadFile(own + "/cgroup.subtree_control").ok() &&
                         !cgroup_fs::SplitWords(*cgroup_fs::ReadFile(own + "/cgroup.subtree_control")).empty();
  (void)cgroup_fs::WriteFile(own + "/cgroup.kill", "1");
  Status removed = cgroup_fs::RemoveTree(own, Clock::now() + milliseconds(2000));
  EXPECT_TRUE(removed.ok()) << removed.ToString();
  EXPECT_FALSE(leftovers) << "controllers still enabled in " << own;
  if (enabled_at_root) (void)cgroup_fs::WriteFile(root + "/cgroup.subtree_control", "-" + controller);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the scenario's stderr";
}

}  // namespace
}  // namespace airlock::jail
