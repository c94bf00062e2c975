// Per-jail control groups: memory (swap off), pids, cpu; cgroup v2 or v1.
//
// A CgroupManager is created once per supervisor. It finds where this
// process's own cgroups are (so limits nest under any container limit), picks
// cgroup v2 when the unified hierarchy has the needed controllers, and
// otherwise the v1 memory, pids and cpu/cpuacct hierarchies (hybrid hosts).
// It makes one parent directory `airlock-<pid>` per hierarchy and removes it
// when destroyed. On v2 it first moves itself into a leaf
// `airlock-<pid>-supervisor` when its own cgroup must enable controllers (the
// "no internal processes" rule), and moves back when destroyed; this needs our
// cgroup to hold no other process. Trees left by a supervisor that died
// (`airlock-<pid>` whose pid no longer exists) are killed and removed.
//
// Each jail gets a Cgroup: a child directory per hierarchy with the limits
// written before any process joins. Destroying a Cgroup kills whatever is
// still inside (cgroup.kill on v2, SIGKILL to each listed pid on v1), waits
// until it is empty and removes the directories. Nothing is left behind.
#ifndef AIRLOCK_JAIL_CGROUP_H_
#define AIRLOCK_JAIL_CGROUP_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock::jail {

struct CgroupLimits {
  uint64_t memory_bytes = 256ull << 20;
  uint32_t max_pids = 64;
  uint32_t cpu_quota_percent = 100;  // 0 = no cpu limit
};

struct CgroupStats {
  uint64_t peak_memory_bytes = 0;  // memory.peak / memory.max_usage_in_bytes
  uint64_t cpu_usage_ns = 0;       // cpu.stat usage_usec*1000 / cpuacct.usage
  uint64_t oom_kills = 0;          // memory.events oom_kill / memory.oom_control oom_kill
  bool pids_limit_hit = false;     // pids.events max > 0
};

enum class CgroupMode { kNone, kV1, kV2 };

// What the host offers; printed by `airlock doctor`.
struct CgroupReport {
  CgroupMode mode = CgroupMode::kNone;
  bool memory = false;
  bool memory_swap = false;  // swap can be limited (or there is no swap at all)
  bool pids = false;
  bool cpu = false;
  // v1: the CPUs the nearest ancestor's cpu.cfs_quota_us allows (0: no
  // quota above us); every jail's quota is clamped to it (cpu_ceiling.h).
  double cpu_ceiling_cpus = 0;
  std::string detail;  // human explanation, e.g. paths used or why unavailable
};

class Cgroup;

// Destroy every Cgroup before its CgroupManager. Use one manager per process.
class CgroupManager {
 public:
  // Probes the host and creates the parent directories.
  static StatusOr<std::unique_ptr<CgroupManager>> Create();
  // Only probes; creates nothing (for doctor).
  static CgroupReport Probe();
  // Testing only: cgroup v2 below `own_dir` (the v2 cgroup this process is
  // in), enabling just `controllers` there. Limits whose controller is not
  // among them are not written. Lets hosts without a v2 memory controller
  // exercise the v2 layout (supervisor leaf, cgroup.kill, cleanup).
  static StatusOr<std::unique_ptr<CgroupManager>> CreateV2ForTesting(const std::string& own_dir,
                                                                     const std::vector<std::string>& controllers);

  ~CgroupManager();
  CgroupManager(const CgroupManager&) = delete;
  CgroupManager& operator=(const CgroupManager&) = delete;

  const CgroupReport& report() const { return report_; }

  // Creates a fresh cgroup named `name` (unique per manager) with `limits`.
  StatusOr<std::unique_ptr<Cgroup>> CreateCgroup(const std::string& name, const CgroupLimits& limits);

 private:
  CgroupManager() = default;
  // Create() helpers: make the parent directories (and, on v2, enable the
  // controllers below our own cgroup, moving into a leaf when needed).
  Status InitV2(const std::string& own_dir, const std::vector<std::string>& controllers);
  Status InitV1(const std::string& memory_dir, const std::string& pids_dir, const std::string& cpu_dir,
                const std::string& cpuacct_dir, const std::string& freezer_dir);
  CgroupReport report_;
  // One parent directory per hierarchy used (v2: one entry).
  std::vector<std::string> parents_;
  // Parent directory per controller ("" when absent; on v2 all are parents_[0]).
  std::string memory_parent_, pids_parent_, cpu_parent_, cpuacct_parent_, freezer_parent_;
  // v2 only: our own cgroup, the leaf this process moved into ("" if it did
  // not move) and the controllers we enabled in our own cgroup.subtree_control.
  std::string v2_own_dir_, v2_supervisor_dir_;
  std::vector<std::string> v2_enabled_in_own_;
  friend class Cgroup;
};

class Cgroup {
 public:
  ~Cgroup();  // kills what is left, removes the directories
  Cgroup(const Cgroup&) = delete;
  Cgroup& operator=(const Cgroup&) = delete;

  // Moves `pid` into every hierarchy of this cgroup.
  Status AddProcess(pid_t pid);
  // For clone3(CLONE_INTO_CGROUP) on v2; -1 on v1.
  int v2_dir_fd() const { return v2_dir_fd_.get(); }

  CgroupStats Stats() const;
  // The host thread ids of every thread inside (v2 cgroup.threads, v1 tasks).
  StatusOr<std::vector<pid_t>> Threads() const;
  // SIGKILLs every process inside (v2 cgroup.kill; v1 walk cgroup.procs).
  Status KillAll();

  // Freezes (true) or thaws (false) every process inside: v2 cgroup.freeze,
  // v1 freezer.state. Returns once the request is written; the kernel
  // completes a freeze in the background (a frozen task never runs user
  // code again until thawed). FailedPrecondition without a freezer.
  Status SetFrozen(bool frozen);
  // Whether the kernel reports every task frozen now.
  bool IsFrozen() const;

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  friend class CgroupManager;
  Cgroup() = default;
  Status ApplyLimits(const CgroupLimits& limits, const CgroupReport& report);
  // True when no live process is left (zombies do not count).
  bool IsEmpty() const;
  CgroupMode mode_ = CgroupMode::kNone;
  std::vector<std::string> paths_;  // one per hierarchy
  UniqueFd v2_dir_fd_;
  // Directory per controller ("" when absent; on v2 all are paths_[0]).
  std::string memory_dir_, pids_dir_, cpu_dir_, cpuacct_dir_, freezer_dir_;
  // v2 without memory.peak: the largest memory.current seen by Stats().
  mutable std::atomic<uint64_t> peak_seen_{0};
};

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_CGROUP_H_
