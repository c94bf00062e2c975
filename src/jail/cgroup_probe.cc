#include "jail/cgroup_probe.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "jail/cgroup_fs.h"
#include "jail/cpu_ceiling.h"

namespace airlock::jail::cgroup_probe {
namespace {

namespace fs = cgroup_fs;

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

// Decodes the \ooo escapes mountinfo uses for space, tab, newline, backslash.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      std::string_view oct = s.substr(i + 1, 3);
      if (oct.size() == 3 && std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>((oct[0] - '0') * 64 + (oct[1] - '0') * 8 + (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

// Our directory in `mount` for the hierarchy path `path`, or "" when the
// mount does not show that part of the hierarchy.
std::string Resolve(const MountEntry& mount, const std::string& path) {
  std::string rel;
  if (mount.root == "/") {
    rel = path;
  } else if (path == mount.root) {
    rel = "/";
  } else if (path.compare(0, mount.root.size() + 1, mount.root + "/") == 0) {
    rel = path.substr(mount.root.size());
  } else {
    return "";
  }
  if (rel.empty() || rel[0] != '/') return "";
  return rel == "/" ? mount.mount_point : mount.mount_point + rel;
}

std::string V1Dir(const std::vector<MountEntry>& mounts, const std::vector<ProcCgroupEntry>& entries,
                  const std::string& controller) {
  for (const ProcCgroupEntry& e : entries) {
    if (!Contains(e.controllers, controller)) continue;
    for (const MountEntry& m : mounts) {
      if (m.fs_type != "cgroup" || !Contains(m.super_options, controller)) continue;
      std::string dir = Resolve(m, e.path);
      if (!dir.empty()) return dir;
    }
  }
  return "";
}

bool NoSwapConfigured() {
  StatusOr<std::string> swaps = fs::ReadFile("/proc/swaps");
  if (!swaps.ok()) return false;
  // Header line only.
  size_t nl = swaps->find('\n');
  return nl == std::string::npos || swaps->find_first_not_of(" \n", nl) == std::string::npos;
}

std::string AccessError(const std::string& path) {
  if (::access(path.c_str(), W_OK) == 0) return "";
  return "no write access to " + path + " (" + std::strerror(errno) + ")";
}

// True when some child cgroup of `dir` has `file` (the root lacks many files).
bool AnyChildHas(const std::string& dir, const std::string& file) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (e->d_type != DT_DIR || name == "." || name == "..") continue;
    if (fs::Exists(dir + "/" + name + "/" + file)) {
      found = true;
      break;
    }
  }
  ::closedir(d);
  return found;
}

bool TryV2(HostPlan& plan, bool no_swap, std::string* why) {
  const std::string& dir = plan.layout.v2_dir;
  if (dir.empty()) {
    *why = "no cgroup2 mount shows this process's cgroup";
    return false;
  }
  StatusOr<std::string> controllers_text = fs::ReadFile(dir + "/cgroup.controllers");
  if (!controllers_text.ok()) {
    *why = controllers_text.status().message();
    return false;
  }
  std::vector<std::string> controllers = fs::SplitWords(*controllers_text);
  std::vector<std::string> missing;
  for (const char* c : {"memory", "pids"}) {
    if (!Contains(controllers, c)) missing.push_back(c);
  }
  if (!missing.empty()) {
    *why = dir + " lacks the " + Join(missing, ", ") + " controller(s) (it offers: " +
           (controllers.empty() ? std::string("none") : Join(controllers, " ")) + ")";
    return false;
  }
  for (const std::string& path : {dir, dir + "/cgroup.subtree_control", dir + "/cgroup.procs"}) {
    if (std::string err = AccessError(path); !err.empty()) {
      *why = err;
      return false;
    }
  }
  const bool is_root = !fs::Exists(dir + "/cgroup.type");
  StatusOr<std::string> subtree_text = fs::ReadFile(dir + "/cgroup.subtree_control");
  std::vector<std::string> subtree = subtree_text.ok() ? fs::SplitWords(*subtree_text) : std::vector<std::string>{};
  const bool must_enable = !Contains(subtree, "memory") || !Contains(subtree, "pids");
  bool must_move = false;
  if (must_enable && !is_root) {
    StatusOr<std::vector<pid_t>> procs = fs::ReadPids(dir + "/cgroup.procs");
    if (!procs.ok()) {
      *why = procs.status().message();
      return false;
    }
    std::vector<std::string> others;
    for (pid_t p : *procs) {
      if (p == ::getpid()) {
        must_move = true;
      } else if (others.size() < 8) {
        others.push_back(std::to_string(p));
      }
    }
    if (!others.empty()) {
      *why = dir + " also holds other processes (" + Join(others, " ") +
             "), so no controllers can be enabled below it (the cgroup v2 no-internal-processes rule)";
      return false;
    }
  }
  plan.v2_controllers = {"memory", "pids"};
  if (Contains(controllers, "cpu")) plan.v2_controllers.push_back("cpu");
  CgroupReport& r = plan.report;
  r.mode = CgroupMode::kV2;
  r.memory = r.pids = true;
  r.cpu = Contains(controllers, "cpu");
  r.memory_swap = no_swap || fs::Exists(dir + "/memory.swap.max") || (is_root && AnyChildHas(dir, "memory.swap.max"));
  r.detail = "cgroup v2 at " + dir + " (controllers: " + Join(controllers, " ") + ")";
  if (must_move) r.detail += "; airlock moves itself into a leaf cgroup " + dir + "/airlock-<pid>-supervisor";
  if (!r.cpu) r.detail += "; no cpu controller: CPU time is limited by RLIMIT_CPU only";
  if (!r.memory_swap) r.detail += "; swap is on but cannot be limited (memory.swap.max missing)";
  return true;
}

bool TryV1(HostPlan& plan, bool no_swap, std::string* why) {
  const HostLayout& l = plan.layout;
  if (l.v1_memory.empty() || l.v1_pids.empty()) {
    std::vector<std::string> missing;
    if (l.v1_memory.empty()) missing.push_back("memory");
    if (l.v1_pids.empty()) missing.push_back("pids");
    *why = "no v1 " + Join(missing, ", ") + " hierarchy mounted";
    return false;
  }
  for (const std::string& dir : {l.v1_memory, l.v1_pids}) {
    if (std::string err = AccessError(dir); !err.empty()) {
      *why = err;
      return false;
    }
  }
  CgroupReport& r = plan.report;
  r.mode = CgroupMode::kV1;
  r.memory = r.pids = true;
  r.cpu = !l.v1_cpu.empty() && fs::Exists(l.v1_cpu + "/cpu.cfs_quota_us") && AccessError(l.v1_cpu).empty();
  r.memory_swap = no_swap || fs::Exists(l.v1_memory + "/memory.memsw.limit_in_bytes");
  r.detail = "cgroup v1: memory=" + l.v1_memory + " pids=" + l.v1_pids;
  r.detail += " cpu=" + (r.cpu ? l.v1_cpu : std::string("(none: CPU time is limited by RLIMIT_CPU only)"));
  r.detail += " cpuacct=" + (l.v1_cpuacct.empty() ? std::string("(none)") : l.v1_cpuacct);
  r.detail += " freezer=" + (l.v1_freezer.empty() ? std::string("(none)") : l.v1_freezer);
  if (!r.memory_swap) r.detail += "; swap is on but cannot be limited (no memory.memsw.*: boot with swapaccount=1)";
  if (r.cpu) {
    if (std::optional<CpuCeiling> ceiling = FindV1CpuCeiling(l.v1_cpu)) {
      r.cpu_ceiling_cpus = ceiling->cpus();
      const std::string cpus = FormatCpus(ceiling->cpus());
      r.detail += "; cpu: parent quota " + cpus + " CPUs (" + ceiling->dir + ": " + std::to_string(ceiling->quota_us) +
                  "/" + std::to_string(ceiling->period_us) + " us); jails clamped to " + cpus;
    }
  }
  return true;
}

}  // namespace

std::vector<MountEntry> ParseMountInfo(std::string_view text) {
  std::vector<MountEntry> mounts;
  for (std::string_view line : Split(text, '\n')) {
    std::vector<std::string_view> f = Split(line, ' ');
    auto dash = std::find(f.begin() + std::min<size_t>(f.size(), 6), f.end(), "-");
    if (f.size() < 10 || dash == f.end() || f.end() - dash < 4) continue;
    MountEntry m;
    m.root = Unescape(f[3]);
    m.mount_point = Unescape(f[4]);
    m.fs_type = std::string(dash[1]);
    for (std::string_view opt : Split(dash[3], ',')) m.super_options.emplace_back(opt);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

std::vector<ProcCgroupEntry> ParseProcCgroup(std::string_view text) {
  std::vector<ProcCgroupEntry> entries;
  for (std::string_view line : Split(text, '\n')) {
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    ProcCgroupEntry e;
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    if (!controllers.empty()) {
      for (std::string_view c : Split(controllers, ',')) e.controllers.emplace_back(c);
    }
    e.path = std::string(line.substr(c2 + 1));
    if (e.path.empty() || e.path[0] != '/') continue;
    entries.push_back(std::move(e));
  }
  return entries;
}

HostLayout FindLayout(std::string_view mountinfo, std::string_view proc_cgroup) {
  std::vector<MountEntry> mounts = ParseMountInfo(mountinfo);
  std::vector<ProcCgroupEntry> entries = ParseProcCgroup(proc_cgroup);
  HostLayout l;
  for (const ProcCgroupEntry& e : entries) {
    if (!e.controllers.empty()) continue;
    for (const MountEntry& m : mounts) {
      if (m.fs_type != "cgroup2") continue;
      std::string dir = Resolve(m, e.path);
      if (dir.empty()) continue;
      l.v2_dir = dir;
      l.v2_mount = m.mount_point;
      break;
    }
    if (!l.v2_dir.empty()) break;
  }
  l.v1_memory = V1Dir(mounts, entries, "memory");
  l.v1_pids = V1Dir(mounts, entries, "pids");
  l.v1_cpu = V1Dir(mounts, entries, "cpu");
  l.v1_cpuacct = V1Dir(mounts, entries, "cpuacct");
  l.v1_freezer = V1Dir(mounts, entries, "freezer");
  return l;
}

HostPlan DetectHost() {
  HostPlan plan;
  StatusOr<std::string> mountinfo = fs::ReadFile("/proc/self/mountinfo");
  StatusOr<std::string> proc_cgroup = fs::ReadFile("/proc/self/cgroup");
  if (!mountinfo.ok() || !proc_cgroup.ok()) {
    plan.report.detail = "cannot inspect cgroups: " +
                         (mountinfo.ok() ? proc_cgroup.status() : mountinfo.status()).message();
    return plan;
  }
  plan.layout = FindLayout(*mountinfo, *proc_cgroup);
  const bool no_swap = NoSwapConfigured();
  std::string v2_why, v1_why;
  if (TryV2(plan, no_swap, &v2_why)) return plan;
  if (TryV1(plan, no_swap, &v1_why)) {
    plan.report.detail += " (cgroup v2 not used: " + v2_why + ")";
    return plan;
  }
  plan.report = CgroupReport();
  plan.report.detail = "no usable cgroups (v2: " + v2_why + "; v1: " + v1_why + ")";
  return plan;
}

std::string CgroupRemedy() {
  return "Fix, one of: run airlock as root; or start it in a cgroup delegated to uid " + std::to_string(::geteuid()) +
         " (cgroup v2: `systemd-run --user --scope -p Delegate=yes airlock serve ...`, or a systemd unit with "
         "User= and Delegate=yes; see docs/deploy.md); or start it with --allow-degraded to run code with "
         "rlimits only (no cgroup memory/pids limits)";
}

}  // namespace airlock::jail::cgroup_probe
