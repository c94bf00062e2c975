#include "jail/cgroup.h"

#include <cctype>
#include <cstdio>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "jail/cgroup_fs.h"
#include "jail/cgroup_probe.h"
#include "jail/cpu_ceiling.h"

namespace airlock::jail {
namespace {

namespace fs = cgroup_fs;
using Clock = std::chrono::steady_clock;

constexpr auto kDrainTimeout = std::chrono::seconds(2);
constexpr auto kFreezeTimeout = std::chrono::milliseconds(100);
constexpr uint64_t kCpuPeriodUs = 100'000;
constexpr uint64_t kMinMemoryBytes = 1ull << 20;
constexpr size_t kMaxNameLength = 64;

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// "+memory +pids" / "-memory -pids".
std::string ControlLine(const std::vector<std::string>& controllers, char sign) {
  std::string out;
  for (const std::string& c : controllers) out += (out.empty() ? "" : " ") + std::string(1, sign) + c;
  return out;
}

void SleepBriefly() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

// SIGKILLs every process listed in any of `procs_files` until none is left
// or `deadline` passes. Freezing `cgroup` first (when it has a freezer and
// is not null) stops forks racing with the kill; frozen v1 tasks die once
// thawed, so thaw right after the first round.
Status KillListed(const std::vector<std::string>& procs_files, Cgroup* cgroup, fs::Deadline deadline) {
  bool frozen = false;
  if (cgroup != nullptr && cgroup->SetFrozen(true).ok()) {
    frozen = true;
    const fs::Deadline until = std::min(deadline, Clock::now() + kFreezeTimeout);
    while (!cgroup->IsFrozen() && Clock::now() < until) SleepBriefly();
  }
  Status status;
  for (;;) {
    std::set<pid_t> pids;
    for (const std::string& file : procs_files) {
      StatusOr<std::vector<pid_t>> listed = fs::ReadPids(file);
      if (!listed.ok()) {
        status = listed.status();
        break;
      }
      pids.insert(listed->begin(), listed->end());
    }
    if (!status.ok()) break;
    pids.erase(::getpid());  // never ourselves, whatever a caller did
    if (pids.empty()) break;
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    if (frozen) {
      (void)cgroup->SetFrozen(false);
      frozen = false;
    }
    if (Clock::now() >= deadline) {
      status = DeadlineExceeded("processes still alive in " + procs_files.front() + " after SIGKILL");
      break;
    }
    SleepBriefly();
  }
  if (frozen) (void)cgroup->SetFrozen(false);
  return status;
}

// The child cgroups (subdirectories) of `dir`, as paths.
std::vector<std::string> ChildDirs(const std::string& dir) {
  std::vector<std::string> children;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return children;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (e->d_type == DT_DIR && name != "." && name != "..") children.push_back(dir + "/" + name);
  }
  ::closedir(d);
  return children;
}

// Every process listed in `dir`'s cgroup.procs and those of its descendants.
void ListTree(const std::string& dir, std::set<pid_t>* pids) {
  if (StatusOr<std::vector<pid_t>> listed = fs::ReadPids(dir + "/cgroup.procs"); listed.ok()) {
    pids->insert(listed->begin(), listed->end());
  }
  for (const std::string& child : ChildDirs(dir)) ListTree(child, pids);
}

// The pid in "airlock-<pid>", "airlock-<pid>-supervisor" or
// "airlock-<pid>-<hex instance>", or 0.
pid_t OwnerOf(const std::string& name) {
  constexpr std::string_view kPrefix = "airlock-";
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return 0;
  const std::string rest = name.substr(kPrefix.size());
  const size_t dash = rest.find('-');
  const std::string digits = rest.substr(0, dash);
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return 0;
  if (dash != std::string::npos) {
    const std::string tail = rest.substr(dash + 1);
    const bool hex = !tail.empty() && tail.size() <= 16 &&
                     std::all_of(tail.begin(), tail.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    if (tail != "supervisor" && !hex) return 0;
  }
  return static_cast<pid_t>(std::stol(digits));
}

// Thaws every frozen cgroup in the tree at `dir` (a session's jail is frozen
// between calls; on v1 a frozen task takes its SIGKILL only once thawed).
void ThawTree(const std::string& dir) {
  if (::access((dir + "/freezer.state").c_str(), F_OK) == 0) (void)fs::WriteFile(dir + "/freezer.state", "THAWED");
  if (::access((dir + "/cgroup.freeze").c_str(), F_OK) == 0) (void)fs::WriteFile(dir + "/cgroup.freeze", "0");
  for (const std::string& child : ChildDirs(dir)) ThawTree(child);
}

// Removes the trees a supervisor that died without cleaning up left in
// `dir` (named after its pid, which no longer exists), killing what is still
// inside: leaked jails must not outlive their supervisor.
void SweepStale(const std::string& dir, bool v2) {
  std::vector<std::string> stale;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      const pid_t owner = e->d_type == DT_DIR ? OwnerOf(e->d_name) : 0;
      if (owner > 0 && owner != ::getpid() && ::kill(owner, 0) != 0 && errno == ESRCH) {
        stale.push_back(dir + "/" + e->d_name);
      }
    }
    ::closedir(d);
  }
  for (const std::string& path : stale) {
    const fs::Deadline deadline = Clock::now() + std::chrono::milliseconds(500);
    if (v2) (void)fs::WriteFileErrno(path + "/cgroup.kill", "1");
    for (;;) {
      std::set<pid_t> pids;
      ListTree(path, &pids);
      pids.erase(::getpid());
      if (pids.empty() || Clock::now() >= deadline) break;
      for (pid_t pid : pids) ::kill(pid, SIGKILL);
      ThawTree(path);  // a frozen session's processes die once thawed
      SleepBriefly();
    }
    (void)fs::RemoveTree(path, deadline);
  }
}

}  // namespace

// ---------------------------------------------------------------- manager

CgroupReport CgroupManager::Probe() { return cgroup_probe::DetectHost().report; }

StatusOr<std::unique_ptr<CgroupManager>> CgroupManager::Create() {
  cgroup_probe::HostPlan plan = cgroup_probe::DetectHost();
  if (plan.report.mode == CgroupMode::kNone) return FailedPrecondition(plan.report.detail);
  std::unique_ptr<CgroupManager> manager(new CgroupManager());
  manager->report_ = plan.report;
  // On failure `manager` is destroyed here, which undoes what was done.
  if (plan.report.mode == CgroupMode::kV2) {
    AIRLOCK_RETURN_IF_ERROR(manager->InitV2(plan.layout.v2_dir, plan.v2_controllers));
  } else {
    const cgroup_probe::HostLayout& l = plan.layout;
    AIRLOCK_RETURN_IF_ERROR(manager->InitV1(l.v1_memory, l.v1_pids, manager->report_.cpu ? l.v1_cpu : "",
                                            l.v1_cpuacct, l.v1_freezer));
  }
  return manager;
}

StatusOr<std::unique_ptr<CgroupManager>> CgroupManager::CreateV2ForTesting(
    const std::string& own_dir, const std::vector<std::string>& controllers) {
  std::unique_ptr<CgroupManager> manager(new CgroupManager());
  manager->report_.mode = CgroupMode::kV2;
  manager->report_.memory = Contains(controllers, "memory");
  manager->report_.pids = Contains(controllers, "pids");
  manager->report_.detail = "testing: cgroup v2 at " + own_dir;
  AIRLOCK_RETURN_IF_ERROR(manager->InitV2(own_dir, controllers));
  return manager;
}

Status CgroupManager::InitV2(const std::string& own_dir, const std::vector<std::string>& controllers) {
  v2_own_dir_ = own_dir;
  const std::string own_subtree = own_dir + "/cgroup.subtree_control";
  AIRLOCK_ASSIGN_OR_RETURN(std::string subtree_text, fs::ReadFile(own_subtree));
  std::vector<std::string> subtree = fs::SplitWords(subtree_text);
  std::vector<std::string> required, optional;
  for (const std::string& c : controllers) {
    if (Contains(subtree, c)) continue;
    (c == "cpu" ? optional : required).push_back(c);
  }
  const bool is_root = !fs::Exists(own_dir + "/cgroup.type");
  if (!(required.empty() && optional.empty()) && !is_root) {
    // No internal processes: our cgroup may hold processes or enable
    // controllers for children, not both. Move ourselves into a leaf.
    AIRLOCK_ASSIGN_OR_RETURN(std::vector<pid_t> procs, fs::ReadPids(own_dir + "/cgroup.procs"));
    if (std::find(procs.begin(), procs.end(), ::getpid()) != procs.end()) {
      const std::string leaf = own_dir + "/airlock-" + std::to_string(::getpid()) + "-supervisor";
      Status made = fs::MakeDir(leaf);
      if (!made.ok() && made.code() != StatusCode::kFailedPrecondition) return made;
      v2_supervisor_dir_ = leaf;
      AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(leaf + "/cgroup.procs", std::to_string(::getpid())));
    }
  }
  if (!required.empty()) {
    const int err = fs::WriteFileErrno(own_subtree, ControlLine(required, '+'));
    if (err == EBUSY) {
      return FailedPrecondition("cannot enable " + ControlLine(required, '+') + " in " + own_subtree +
                                ": the cgroup still holds other processes; start airlock in a cgroup of its "
                                "own (systemd-run --user --scope -p Delegate=yes ...)");
    }
    if (err != 0) return ErrnoError("write '" + ControlLine(required, '+') + "' to " + own_subtree, err);
    if (!is_root) v2_enabled_in_own_ = required;
  }
  for (const std::string& c : optional) {
    if (fs::WriteFileErrno(own_subtree, "+" + c) == 0 && !is_root) v2_enabled_in_own_.push_back(c);
  }

  SweepStale(own_dir, /*v2=*/true);
  const std::string parent = own_dir + "/airlock-" + std::to_string(::getpid());
  Status made = fs::MakeDir(parent);
  if (made.code() == StatusCode::kFailedPrecondition) {  // stale, from a dead process with our pid
    AIRLOCK_RETURN_IF_ERROR(fs::RemoveTree(parent, Clock::now() + kDrainTimeout));
    made = fs::MakeDir(parent);
  }
  AIRLOCK_RETURN_IF_ERROR(made);
  parents_.push_back(parent);
  memory_parent_ = pids_parent_ = cpu_parent_ = cpuacct_parent_ = freezer_parent_ = parent;

  AIRLOCK_ASSIGN_OR_RETURN(std::string available, fs::ReadFile(parent + "/cgroup.controllers"));
  std::vector<std::string> offered = fs::SplitWords(available);
  std::vector<std::string> below;  // every controller but cpu is required
  for (const std::string& c : controllers) {
    if (c == "cpu") continue;
    if (!Contains(offered, c)) return FailedPrecondition("the " + c + " controller is not available in " + parent);
    below.push_back(c);
  }
  if (!below.empty()) AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(parent + "/cgroup.subtree_control", ControlLine(below, '+')));
  report_.cpu = Contains(controllers, "cpu") && Contains(offered, "cpu") &&
                fs::WriteFileErrno(parent + "/cgroup.subtree_control", "+cpu") == 0;
  return OkStatus();
}

Status CgroupManager::InitV1(const std::string& memory_dir, const std::string& pids_dir, const std::string& cpu_dir,
                             const std::string& cpuacct_dir, const std::string& freezer_dir) {
  // One directory per manager (pid + instance), so two managers in one
  // process (tests) never remove each other's parent.
  char instance[20];
  std::snprintf(instance, sizeof instance, "%zx", reinterpret_cast<uintptr_t>(this) & 0xffffffffu);
  const std::string name = "airlock-" + std::to_string(::getpid()) + "-" + instance;
  // The freezer's stale trees first: a dead supervisor's frozen session
  // takes its SIGKILL only once thawed, and the other hierarchies' trees
  // can be removed only when its processes are gone.
  if (!freezer_dir.empty()) SweepStale(freezer_dir, /*v2=*/false);
  // Returns the parent made under `dir` ("" if `dir` is empty or, for an
  // optional hierarchy, cannot be used).
  auto make = [&](const std::string& dir, bool required, std::string* parent) -> Status {
    if (dir.empty()) return OkStatus();
    SweepStale(dir, /*v2=*/false);
    const std::string path = dir + "/" + name;
    if (!Contains(parents_, path)) {
      Status made = fs::MakeDir(path);
      if (made.code() == StatusCode::kFailedPrecondition) {
        made = fs::RemoveTree(path, Clock::now() + kDrainTimeout);
        if (made.ok()) made = fs::MakeDir(path);
      }
      if (!made.ok()) return required ? made : OkStatus();
      parents_.push_back(path);
    }
    *parent = path;
    return OkStatus();
  };
  AIRLOCK_RETURN_IF_ERROR(make(memory_dir, true, &memory_parent_));
  AIRLOCK_RETURN_IF_ERROR(make(pids_dir, true, &pids_parent_));
  AIRLOCK_RETURN_IF_ERROR(make(cpu_dir, false, &cpu_parent_));
  AIRLOCK_RETURN_IF_ERROR(make(cpuacct_dir, false, &cpuacct_parent_));
  AIRLOCK_RETURN_IF_ERROR(make(freezer_dir, false, &freezer_parent_));
  report_.cpu = !cpu_parent_.empty();
  // Old kernels let use_hierarchy be 0; limits must apply to the whole subtree.
  const std::string hierarchy = memory_parent_ + "/memory.use_hierarchy";
  StatusOr<uint64_t> use_hierarchy = fs::ReadUint(hierarchy);
  if (use_hierarchy.ok() && *use_hierarchy == 0) AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(hierarchy, "1"));
  return OkStatus();
}

CgroupManager::~CgroupManager() {
  const fs::Deadline deadline = Clock::now() + kDrainTimeout;
  for (const std::string& parent : parents_) (void)fs::RemoveTree(parent, deadline);
  if (!v2_enabled_in_own_.empty()) {
    (void)fs::WriteFileErrno(v2_own_dir_ + "/cgroup.subtree_control", ControlLine(v2_enabled_in_own_, '-'));
  }
  if (!v2_supervisor_dir_.empty()) {
    (void)fs::WriteFileErrno(v2_own_dir_ + "/cgroup.procs", std::to_string(::getpid()));
    (void)fs::RemoveDir(v2_supervisor_dir_, deadline);
  }
}

StatusOr<std::unique_ptr<Cgroup>> CgroupManager::CreateCgroup(const std::string& name, const CgroupLimits& limits) {
  if (!ValidName(name)) {
    return InvalidArgument("cgroup name '" + name + "' must be 1-64 characters from [A-Za-z0-9_-]");
  }
  if (limits.memory_bytes < kMinMemoryBytes) return InvalidArgument("cgroup memory limit below 1 MiB");
  if (limits.max_pids == 0) return InvalidArgument("cgroup pids limit must be at least 1");

  std::unique_ptr<Cgroup> cgroup(new Cgroup());
  cgroup->mode_ = report_.mode;
  // On failure `cgroup` is destroyed, removing what was made.
  auto make = [&](const std::string& parent, std::string* dir) -> Status {
    if (parent.empty()) return OkStatus();
    *dir = parent + "/" + name;
    if (Contains(cgroup->paths_, *dir)) return OkStatus();
    AIRLOCK_RETURN_IF_ERROR(fs::MakeDir(*dir));
    cgroup->paths_.push_back(*dir);
    return OkStatus();
  };
  AIRLOCK_RETURN_IF_ERROR(make(memory_parent_, &cgroup->memory_dir_));
  AIRLOCK_RETURN_IF_ERROR(make(pids_parent_, &cgroup->pids_dir_));
  AIRLOCK_RETURN_IF_ERROR(make(cpu_parent_, &cgroup->cpu_dir_));
  AIRLOCK_RETURN_IF_ERROR(make(cpuacct_parent_, &cgroup->cpuacct_dir_));
  AIRLOCK_RETURN_IF_ERROR(make(freezer_parent_, &cgroup->freezer_dir_));
  AIRLOCK_RETURN_IF_ERROR(cgroup->ApplyLimits(limits, report_));
  if (cgroup->mode_ == CgroupMode::kV2) {
    const std::string& dir = cgroup->paths_.front();
    cgroup->v2_dir_fd_.Reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cgroup->v2_dir_fd_) return ErrnoError("open " + dir);
  }
  return cgroup;
}

// ---------------------------------------------------------------- cgroup

Status Cgroup::ApplyLimits(const CgroupLimits& limits, const CgroupReport& report) {
  const uint64_t quota_us = uint64_t{limits.cpu_quota_percent} * kCpuPeriodUs / 100;
  if (mode_ == CgroupMode::kV2) {
    const std::string& dir = paths_.front();
    if (report.memory) {
      AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(dir + "/memory.max", std::to_string(limits.memory_bytes)));
      if (fs::Exists(dir + "/memory.swap.max")) AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(dir + "/memory.swap.max", "0"));
    }
    if (report.pids) AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(dir + "/pids.max", std::to_string(limits.max_pids)));
    if (report.cpu && limits.cpu_quota_percent > 0 && fs::Exists(dir + "/cpu.max")) {
      AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(
          dir + "/cpu.max", std::to_string(std::max<uint64_t>(quota_us, 1000)) + " " + std::to_string(kCpuPeriodUs)));
    }
    return OkStatus();
  }
  const std::string bytes = std::to_string(limits.memory_bytes);
  AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(memory_dir_ + "/memory.limit_in_bytes", bytes));
  // memsw (memory + swap) must be written after the memory limit it bounds.
  if (fs::Exists(memory_dir_ + "/memory.memsw.limit_in_bytes")) {
    AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(memory_dir_ + "/memory.memsw.limit_in_bytes", bytes));
  }
  AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(pids_dir_ + "/pids.max", std::to_string(limits.max_pids)));
  if (!cpu_dir_.empty() && limits.cpu_quota_percent > 0) {
    // v1 refuses a quota above the nearest ancestor's share (a runner host
    // under a container's CPU limit): ask for at most that (cpu_ceiling.h).
    const CpuBandwidth cpu = ClampToCeiling({std::max<uint64_t>(quota_us, 1000), kCpuPeriodUs},
                                            FindV1CpuCeiling(cpu_dir_.substr(0, cpu_dir_.rfind('/'))));
    AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(cpu_dir_ + "/cpu.cfs_period_us", std::to_string(cpu.period_us)));
    AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(cpu_dir_ + "/cpu.cfs_quota_us", std::to_string(cpu.quota_us)));
  }
  return OkStatus();
}

Status Cgroup::AddProcess(pid_t pid) {
  if (pid <= 0) return InvalidArgument("AddProcess: bad pid " + std::to_string(pid));
  for (const std::string& path : paths_) {
    AIRLOCK_RETURN_IF_ERROR(fs::WriteFile(path + "/cgroup.procs", std::to_string(pid)));
  }
  return OkStatus();
}

StatusOr<std::vector<pid_t>> Cgroup::Threads() const {
  std::vector<pid_t> out;
  if (paths_.empty()) return out;
  const std::string file = paths_.front() + (mode_ == CgroupMode::kV2 ? "/cgroup.threads" : "/tasks");
  AIRLOCK_ASSIGN_OR_RETURN(std::string text, fs::ReadFile(file));
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (end > pos) {
      const long tid = strtol(text.substr(pos, end - pos).c_str(), nullptr, 10);
      if (tid <= 0) return Internal(file + ": unexpected content");
      out.push_back(static_cast<pid_t>(tid));
    }
    pos = end + 1;
  }
  return out;
}

CgroupStats Cgroup::Stats() const {
  CgroupStats stats;
  if (paths_.empty()) return stats;
  if (mode_ == CgroupMode::kV2) {
    const std::string& dir = paths_.front();
    if (StatusOr<uint64_t> peak = fs::ReadUint(dir + "/memory.peak"); peak.ok()) {
      stats.peak_memory_bytes = *peak;
    } else {
      // Before Linux 5.19: the best we have is the largest value sampled.
      StatusOr<uint64_t> read = fs::ReadUint(dir + "/memory.current");
      const uint64_t current = read.ok() ? *read : 0;
      uint64_t seen = peak_seen_.load();
      while (current > seen && !peak_seen_.compare_exchange_weak(seen, current)) {
      }
      stats.peak_memory_bytes = std::max(seen, current);
    }
    stats.cpu_usage_ns = fs::ReadKeyedValue(dir + "/cpu.stat", "usage_usec").value_or(0) * 1000;
    stats.oom_kills = fs::ReadKeyedValue(dir + "/memory.events", "oom_kill").value_or(0);
    stats.pids_limit_hit = fs::ReadKeyedValue(dir + "/pids.events", "max").value_or(0) > 0;
    return stats;
  }
  if (StatusOr<uint64_t> peak = fs::ReadUint(memory_dir_ + "/memory.max_usage_in_bytes"); peak.ok()) {
    stats.peak_memory_bytes = *peak;
  }
  if (!cpuacct_dir_.empty()) {
    if (StatusOr<uint64_t> usage = fs::ReadUint(cpuacct_dir_ + "/cpuacct.usage"); usage.ok()) {
      stats.cpu_usage_ns = *usage;
    }
  }
  if (std::optional<uint64_t> kills = fs::ReadKeyedValue(memory_dir_ + "/memory.oom_control", "oom_kill")) {
    stats.oom_kills = *kills;
  } else if (StatusOr<uint64_t> failcnt = fs::ReadUint(memory_dir_ + "/memory.failcnt"); failcnt.ok()) {
    // Kernels before 4.13 do not count OOM kills; hitting the limit is the
    // closest indication.
    stats.oom_kills = *failcnt > 0 ? 1 : 0;
  }
  stats.pids_limit_hit = fs::ReadKeyedValue(pids_dir_ + "/pids.events", "max").value_or(0) > 0;
  return stats;
}

bool Cgroup::IsEmpty() const {
  if (mode_ == CgroupMode::kV2) {
    return fs::ReadKeyedValue(paths_.front() + "/cgroup.events", "populated").value_or(1) == 0;
  }
  for (const std::string& path : paths_) {
    StatusOr<std::vector<pid_t>> pids = fs::ReadPids(path + "/cgroup.procs");
    if (!pids.ok() || !pids->empty()) return false;
  }
  return true;
}

Status Cgroup::KillAll() {
  if (paths_.empty() || IsEmpty()) return OkStatus();  // the common case: the jail is gone already
  const fs::Deadline deadline = Clock::now() + kDrainTimeout;
  std::vector<std::string> procs_files;
  for (const std::string& path : paths_) procs_files.push_back(path + "/cgroup.procs");
  if (mode_ == CgroupMode::kV2) {
    const std::string& dir = paths_.front();
    const int err = fs::WriteFileErrno(dir + "/cgroup.kill", "1");
    if (err == ENOENT) {  // before Linux 5.14: freeze, kill each, thaw
      AIRLOCK_RETURN_IF_ERROR(KillListed(procs_files, this, deadline));
    } else if (err != 0) {
      return ErrnoError("write '1' to " + dir + "/cgroup.kill", err);
    }
  } else {
    // v1: frozen first where the freezer hierarchy is mounted (SetFrozen).
    AIRLOCK_RETURN_IF_ERROR(KillListed(procs_files, this, deadline));
  }
  while (!IsEmpty()) {
    if (Clock::now() >= deadline) return DeadlineExceeded("cgroup " + paths_.front() + " still not empty after SIGKILL");
    SleepBriefly();
  }
  return OkStatus();
}

Status Cgroup::SetFrozen(bool frozen) {
  if (mode_ == CgroupMode::kV2) {
    return fs::WriteFile(paths_.front() + "/cgroup.freeze", frozen ? "1" : "0");
  }
  if (!freezer_dir_.empty()) return fs::WriteFile(freezer_dir_ + "/freezer.state", frozen ? "FROZEN" : "THAWED");
  return FailedPrecondition("no cgroup freezer on this host");
}

bool Cgroup::IsFrozen() const {
  if (mode_ == CgroupMode::kV2) {
    return fs::ReadKeyedValue(paths_.front() + "/cgroup.events", "frozen").value_or(0) == 1;
  }
  if (freezer_dir_.empty()) return false;
  StatusOr<std::string> state = fs::ReadFile(freezer_dir_ + "/freezer.state");
  return state.ok() && state->rfind("FROZEN", 0) == 0;
}

Cgroup::~Cgroup() {
  if (paths_.empty()) return;
  (void)KillAll();
  v2_dir_fd_.Reset();
  const fs::Deadline deadline = Clock::now() + kDrainTimeout;
  for (const std::string& path : paths_) (void)fs::RemoveDir(path, deadline);
}

}  // namespace airlock::jail
