// Jails under a CPU-limited parent on cgroup v1 (jail/cpu_ceiling.h): the
// arithmetic on its own, the walk up a fake tree, and for real as root: a
// parent cgroup with 0.5 CPU, this test process moved into it, then a
// JailHost that must create jails asking for 2 CPUs (clamped to 0.5).
#include "jail/cpu_ceiling.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jail/cgroup.h"
#include "jail/cgroup_probe.h"
#include "jail/host.h"
#include "jail/jail.h"
#include "jail/seccomp_policy.h"
#include "test_jail_host.h"

namespace airlock::jail {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

long long ReadNumber(const std::string& path) { return std::atoll(Slurp(path).c_str()); }

// ---------------------------------------------------------------- pure

TEST(ClampToCeiling, NoCeilingOrRoomLeavesTheRequest) {
  EXPECT_EQ(ClampToCeiling({200000, 100000}, std::nullopt).quota_us, 200000u);
  const CpuCeiling two_cpus{"/x", 200000, 100000};
  const CpuBandwidth same = ClampToCeiling({200000, 100000}, two_cpus);
  EXPECT_EQ(same.quota_us, 200000u);
  EXPECT_EQ(same.period_us, 100000u);
}

TEST(ClampToCeiling, AboveTheCeilingGetsItsShareAtTheJailsPeriod) {
  // docker --cpus 1.5 writes 150000/100000; a jail asking for 2 CPUs.
  const CpuBandwidth a = ClampToCeiling({200000, 100000}, CpuCeiling{"/x", 150000, 100000});
  EXPECT_EQ(a.quota_us, 150000u);
  EXPECT_EQ(a.period_us, 100000u);
  // A different parent period: 0.5 CPU as 25000/50000 -> 50000 per 100000.
  const CpuBandwidth b = ClampToCeiling({100000, 100000}, CpuCeiling{"/x", 25000, 50000});
  EXPECT_EQ(b.quota_us, 50000u);
  EXPECT_EQ(b.period_us, 100000u);
  // Rounded down, never above: 1/3 CPU as 33333/99999 -> 33333 per 100000.
  const CpuBandwidth c = ClampToCeiling({100000, 100000}, CpuCeiling{"/x", 33333, 99999});
  EXPECT_LE(c.quota_us * 99999, 33333ull * c.period_us);
}

TEST(ClampToCeiling, BelowTheKernelMinimumTakesTheCeilingsOwnPeriod) {
  // 0.005 CPU: 500 us per 100 ms is under the 1 ms minimum quota.
  const CpuBandwidth a = ClampToCeiling({100000, 100000}, CpuCeiling{"/x", 5000, 1000000});
  EXPECT_EQ(a.quota_us, 5000u);
  EXPECT_EQ(a.period_us, 1000000u);
}

TEST(FormatCpus, AtMostTwoDecimals) {
  EXPECT_EQ(FormatCpus(1.5), "1.5");
  EXPECT_EQ(FormatCpus(2), "2");
  EXPECT_EQ(FormatCpus(0.25), "0.25");
  EXPECT_EQ(FormatCpus(1.0 / 3), "0.33");
}

// A directory tree of plain files shaped like cgroup v1 cpu directories.
class FakeTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-cpu-ceiling-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }
  // `rel` below the root, with a quota and period.
  std::string Cgroup(const std::string& rel, long long quota, long long period = 100000) {
    const std::string dir = rel.empty() ? root_ + "/cpu" : root_ + "/cpu/" + rel;
    std::system(("mkdir -p '" + dir + "'").c_str());
    WriteText(dir + "/cpu.cfs_quota_us", std::to_string(quota) + "\n");
    WriteText(dir + "/cpu.cfs_period_us", std::to_string(period) + "\n");
    return dir;
  }
  std::string root_;
};

TEST_F(FakeTree, FindsTheNearestAncestorWithAQuota) {
  Cgroup("", -1);
  Cgroup("docker", -1);
  const std::string limited = Cgroup("docker/ctr", 150000);
  const std::string own = Cgroup("docker/ctr/sub", -1);
  const std::string airlock = Cgroup("docker/ctr/sub/airlock-1-2", -1);
  std::optional<CpuCeiling> c = FindV1CpuCeiling(airlock);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->dir, limited);
  EXPECT_EQ(c->quota_us, 150000u);
  EXPECT_DOUBLE_EQ(c->cpus(), 1.5);
  EXPECT_TRUE(FindV1CpuCeiling(own).has_value());
}

TEST_F(FakeTree, NoQuotaUpToTheHierarchyRoot) {
  Cgroup("", -1);
  const std::string own = Cgroup("a/b", -1);
  EXPECT_FALSE(FindV1CpuCeiling(own).has_value());
  // Above the hierarchy root (no cpu.cfs_quota_us) the walk stops.
  EXPECT_FALSE(FindV1CpuCeiling(root_).has_value());
}

// ---------------------------------------------------------------- real

// A cgroup in the v1 cpu hierarchy below this process's own, with a quota,
// that this process is moved into; moved back and removed when destroyed.
class ScopedCpuParent {
 public:
  ScopedCpuParent(const std::string& own_dir, uint64_t quota_us, uint64_t period_us)
      : own_dir_(own_dir), dir_(own_dir + "/airlock-cputest-" + std::to_string(::getpid())) {
    if (::mkdir(dir_.c_str(), 0755) != 0) {
      error_ = "mkdir " + dir_ + ": " + std::strerror(errno);
      return;
    }
    made_ = true;
    if (!WriteText(dir_ + "/cpu.cfs_period_us", std::to_string(period_us)) ||
        !WriteText(dir_ + "/cpu.cfs_quota_us", std::to_string(quota_us))) {
      error_ = "cannot set the quota of " + dir_;
      return;
    }
    if (!WriteText(dir_ + "/cgroup.procs", std::to_string(::getpid()))) {
      error_ = "cannot move this process into " + dir_;
      return;
    }
    moved_ = true;
  }
  ~ScopedCpuParent() {
    if (moved_) WriteText(own_dir_ + "/cgroup.procs", std::to_string(::getpid()));
    if (!made_) return;
    for (int i = 0; i < 200 && ::rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ScopedCpuParent(const ScopedCpuParent&) = delete;
  ScopedCpuParent& operator=(const ScopedCpuParent&) = delete;

  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string own_dir_, dir_, error_;
  bool made_ = false, moved_ = false;
};

// Every cpu.cfs_quota_us of a jail below `parent` (airlock-<pid>-<x>/jail-N).
std::vector<std::string> JailQuotaFiles(const std::string& parent) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob((parent + "/airlock-*/jail-*/cpu.cfs_quota_us").c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

TEST(CpuCeilingOnV1, JailsUnderAHalfCpuParentAreClampedAndRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (creates a cgroup in the v1 cpu hierarchy)";
  const cgroup_probe::HostLayout layout =
      cgroup_probe::FindLayout(Slurp("/proc/self/mountinfo"), Slurp("/proc/self/cgroup"));
  if (layout.v1_cpu.empty() || ::access((layout.v1_cpu + "/cpu.cfs_quota_us").c_str(), W_OK) != 0) {
    GTEST_SKIP() << "no writable cgroup v1 cpu hierarchy (a cgroup v2-only host: cpu.max below a smaller "
                    "parent is accepted there, nothing to clamp)";
  }
  if (std::optional<CpuCeiling> above = FindV1CpuCeiling(layout.v1_cpu); above && above->cpus() < 0.5) {
    GTEST_SKIP() << "this process already runs under " << above->cpus() << " CPU (" << above->dir << ")";
  }
  ScopedCpuParent parent(layout.v1_cpu, 50000, 100000);  // 0.5 CPU
  ASSERT_EQ(parent.error(), "");

  // doctor's view: the probe finds the ceiling and says so.
  const CgroupReport report = CgroupManager::Probe();
  ASSERT_EQ(report.mode, CgroupMode::kV1) << report.detail;
  EXPECT_DOUBLE_EQ(report.cpu_ceiling_cpus, 0.5);
  EXPECT_NE(report.detail.find("cpu: parent quota 0.5 CPUs (" + parent.dir()), std::string::npos) << report.detail;
  EXPECT_NE(report.detail.find("jails clamped to 0.5"), std::string::npos) << report.detail;

  StatusOr<std::unique_ptr<JailHost>> host = tests::CreateJailHost();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  ASSERT_NE((*host)->cgroups(), nullptr);
  ASSERT_TRUE((*host)->cgroups()->report().cpu);

  // A cgroup asking for 2 CPUs: created, with 0.5 CPU per 100 ms.
  {
    CgroupLimits limits;
    limits.cpu_quota_percent = 200;
    StatusOr<std::unique_ptr<Cgroup>> cg = (*host)->cgroups()->CreateCgroup("cputest", limits);
    ASSERT_TRUE(cg.ok()) << cg.status().ToString();
    std::string cpu_dir;
    for (const std::string& p : (*cg)->paths()) {
      if (p.rfind(parent.dir() + "/", 0) == 0) cpu_dir = p;
    }
    ASSERT_NE(cpu_dir, "") << "no cgroup below " << parent.dir();
    EXPECT_EQ(ReadNumber(cpu_dir + "/cpu.cfs_quota_us"), 50000);
    EXPECT_EQ(ReadNumber(cpu_dir + "/cpu.cfs_period_us"), 100000);
  }

  // A real jail asking for 2 CPUs runs, and its cgroup has the clamped quota.
  StatusOr<BpfProgram> policy = BuildDefaultPolicy();
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  JailConfig config;
  config.limits.cpu_quota_percent = 200;
  StatusOr<std::unique_ptr<Jail>> jail = Jail::Create(**host, config);
  ASSERT_TRUE(jail.ok()) << jail.status().ToString();
  const std::vector<std::string> quota_files = JailQuotaFiles(parent.dir());
  ASSERT_EQ(quota_files.size(), 1u);
  EXPECT_EQ(ReadNumber(quota_files[0]), 50000);
  ExecRequest req;
  req.argv = {"/bin/sh", "-c", "echo ran"};
  req.env = {"PATH=/usr/bin:/bin"};
  req.seccomp = &*policy;
  ExecResult r = (*jail)->Exec(req, nullptr);
  EXPECT_EQ(r.outcome, ExecResult::Outcome::kExited) << r.error << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "ran\n");
}

}  // namespace
}  // namespace airlock::jail
