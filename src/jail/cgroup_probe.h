// Finding this process's cgroups and deciding between cgroup v2 and v1
// (internal to the cgroup module; the parsers are pure for unit tests).
//
// The layout comes from /proc/self/mountinfo (where each hierarchy is
// mounted, and which part of it the mount shows) and /proc/self/cgroup (our
// path in each hierarchy). DetectHost() then reads the control files to see
// which controllers are usable and fills a CgroupReport.
#ifndef AIRLOCK_JAIL_CGROUP_PROBE_H_
#define AIRLOCK_JAIL_CGROUP_PROBE_H_

#include <string>
#include <string_view>
#include <vector>

#include "jail/cgroup.h"

namespace airlock::jail::cgroup_probe {

struct MountEntry {
  std::string root;         // path inside the filesystem that is mounted
  std::string mount_point;  // octal escapes (\040) decoded
  std::string fs_type;      // "cgroup2", "cgroup", ...
  std::vector<std::string> super_options;  // e.g. {"rw", "cpu", "cpuacct"}
};
std::vector<MountEntry> ParseMountInfo(std::string_view text);

struct ProcCgroupEntry {
  std::vector<std::string> controllers;  // empty for the v2 line "0::/path"
  std::string path;
};
std::vector<ProcCgroupEntry> ParseProcCgroup(std::string_view text);

// Directories of this process's own cgroups ("" when not available).
struct HostLayout {
  std::string v2_dir;     // in the unified (cgroup2) hierarchy
  std::string v2_mount;   // the cgroup2 mount point
  std::string v1_memory;  // v1 hierarchies, by controller; a combined
  std::string v1_pids;    // cpu,cpuacct mount gives equal v1_cpu and v1_cpuacct
  std::string v1_cpu;
  std::string v1_cpuacct;
  std::string v1_freezer;
};
HostLayout FindLayout(std::string_view mountinfo, std::string_view proc_cgroup);

// Mode and capabilities of this host, plus the layout they refer to.
struct HostPlan {
  CgroupReport report;
  HostLayout layout;
  // v2: the controllers to enable below our cgroup ("memory", "pids", maybe "cpu").
  std::vector<std::string> v2_controllers;
};
HostPlan DetectHost();

// What to do when this process cannot use cgroups ("Fix, one of: run
// airlock as root; ... --allow-degraded ..."), naming our effective uid.
std::string CgroupRemedy();

}  // namespace airlock::jail::cgroup_probe

#endif  // AIRLOCK_JAIL_CGROUP_PROBE_H_
