// Per-jail control groups: memory (swap off), pids, cpu; cgroup v2 or v1.
//
// A CgroupManager is created once per supervisor. It finds where this
// process's own cgroups are (so limits nest under any container limit), picks
// cgroup v2 when the unified hierarchy has the needed controllers, and
// otherwise the v1 memory, pids and cpu/cpuacct hierarchies (hybrid hosts).
// It makes one parent directory `airlock-<pid>` per hierarchy and removes it
// when destroyed.
//
// Each jail gets a Cgroup: a child directory per hierarchy with the limits
// written before any process joins. Destroying a Cgroup kills whatever is
// still inside (cgroup.kill on v2, SIGKILL to each listed pid on v1), waits
// until it is empty and removes the directories. Nothing is left behind.
#ifndef AIRLOCK_JAIL_CGROUP_H_
#define AIRLOCK_JAIL_CGROUP_H_

#include <sys/types.h>

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
  std::string detail;  // human explanation, e.g. paths used or why unavailable
};

class Cgroup;

class CgroupManager {
 public:
  // Probes the host and creates the parent directories.
  static StatusOr<std::unique_ptr<CgroupManager>> Create();
  // Only probes; creates nothing (for doctor).
  static CgroupReport Probe();

  ~CgroupManager();
  CgroupManager(const CgroupManager&) = delete;
  CgroupManager& operator=(const CgroupManager&) = delete;

  const CgroupReport& report() const { return report_; }

  // Creates a fresh cgroup named `name` (unique per manager) with `limits`.
  StatusOr<std::unique_ptr<Cgroup>> CreateCgroup(const std::string& name, const CgroupLimits& limits);

 private:
  CgroupManager() = default;
  CgroupReport report_;
  // One parent directory per hierarchy used (v2: one entry).
  std::vector<std::string> parents_;
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
  // SIGKILLs every process inside (v2 cgroup.kill; v1 walk cgroup.procs).
  Status KillAll();

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  friend class CgroupManager;
  Cgroup() = default;
  CgroupMode mode_ = CgroupMode::kNone;
  std::vector<std::string> paths_;  // one per hierarchy
  UniqueFd v2_dir_fd_;
};

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_CGROUP_H_
