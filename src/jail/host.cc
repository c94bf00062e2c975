#include "jail/host.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <fstream>

#include "base/self_exe.h"
#include "jail/cgroup_probe.h"

namespace airlock::jail {
namespace {

std::string DefaultInitPath() { return SiblingOfSelf("airlock-init"); }

std::string ReadSmallFile(const char* path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// Forks a child that tries to unshare `flags`; true if that worked.
bool CanUnshare(int flags) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(unshare(flags) == 0 ? 0 : 1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::vector<LayerStatus> JailHost::Probe(const HostOptions& options) {
  std::vector<LayerStatus> layers;
  const std::string init_path = options.init_path.empty() ? DefaultInitPath() : options.init_path;

  {
    LayerStatus l{"jail init binary", access(init_path.c_str(), X_OK) == 0, true, init_path};
    if (!l.available) l.detail += " is missing or not executable (build it: cmake --build build)";
    layers.push_back(l);
  }
  {
    const std::string max_ns = ReadSmallFile("/proc/sys/user/max_user_namespaces");
    const std::string unpriv = ReadSmallFile("/proc/sys/kernel/unprivileged_userns_clone");
    bool ok = CanUnshare(CLONE_NEWUSER);
    std::string detail = "max_user_namespaces=" + (max_ns.empty() ? "?" : max_ns);
    if (!unpriv.empty()) detail += ", unprivileged_userns_clone=" + unpriv;
    if (!ok) detail += "; enable with: sysctl -w user.max_user_namespaces=15000 kernel.unprivileged_userns_clone=1 (or AppArmor: kernel.apparmor_restrict_unprivileged_userns=0)";
    layers.push_back({"user namespace", ok, true, detail});
  }
  {
    bool ok = CanUnshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                         CLONE_NEWUTS | CLONE_NEWCGROUP);
    layers.push_back({"mount/pid/net/ipc/uts/cgroup namespaces", ok, true,
                      ok ? "new namespaces can be created" : "unshare of namespaces failed"});
  }
  {
    bool ok = prctl(PR_GET_SECCOMP) >= 0;
    layers.push_back({"seccomp-bpf", ok, true, ok ? "filter mode available" : "kernel lacks CONFIG_SECCOMP_FILTER"});
  }
  {
    CgroupReport r = CgroupManager::Probe();
    const char* mode = r.mode == CgroupMode::kV2 ? "cgroup v2" : r.mode == CgroupMode::kV1 ? "cgroup v1" : "none";
    bool ok = r.mode != CgroupMode::kNone && r.memory && r.pids;
    std::string detail = std::string(mode) + ": memory=" + (r.memory ? "yes" : "no") +
                         " swap-off=" + (r.memory_swap ? "yes" : "no") + " pids=" + (r.pids ? "yes" : "no") +
                         " cpu=" + (r.cpu ? "yes" : "no") + (r.detail.empty() ? "" : "; " + r.detail);
    if (!ok) detail += ". " + cgroup_probe::CgroupRemedy();
    layers.push_back({"cgroups (memory, pids, cpu)", ok, !options.allow_degraded, detail});
  }
  return layers;
}

StatusOr<std::unique_ptr<JailHost>> JailHost::Create(const HostOptions& options) {
  std::unique_ptr<JailHost> host(new JailHost());
  host->options_ = options;
  if (host->options_.init_path.empty()) host->options_.init_path = DefaultInitPath();
  host->init_fd_.Reset(open(host->options_.init_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!host->init_fd_) {
    return FailedPrecondition("cannot open the jail init binary " + host->options_.init_path + ": " +
                              std::strerror(errno));
  }
  host->privileged_ = geteuid() == 0;
  if (!CanUnshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET)) {
    return FailedPrecondition(
        "user namespaces are unavailable on this host, so airlock cannot build a jail; run `airlock doctor`");
  }
  StatusOr<std::unique_ptr<CgroupManager>> cg = CgroupManager::Create();
  if (cg.ok() && (*cg)->report().memory && (*cg)->report().pids) {
    host->cgroups_ = std::move(cg).value();
  } else if (!options.allow_degraded) {
    return FailedPrecondition(
        "cgroup memory/pids controllers are not usable by uid " + std::to_string(geteuid()) + " (" +
        (cg.ok() ? (*cg)->report().detail : cg.status().message()) +
        "); refusing to run without memory and process limits. " + cgroup_probe::CgroupRemedy() +
        ". `airlock doctor` shows every layer");
  }
  host->slots_in_use_.assign(options.uid_count, false);
  return host;
}

StatusOr<JailHost::Identity> JailHost::AcquireIdentity() {
  if (!privileged_) return Identity{-1, getuid(), getgid()};
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < slots_in_use_.size(); ++i) {
    if (!slots_in_use_[i]) {
      slots_in_use_[i] = true;
      const uid_t id = options_.uid_base + static_cast<uid_t>(i);
      return Identity{static_cast<int>(i), id, static_cast<gid_t>(id)};
    }
  }
  return ResourceExhausted("no free jail uid (all " + std::to_string(slots_in_use_.size()) + " in use)");
}

void JailHost::ReleaseIdentity(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<size_t>(slot) < slots_in_use_.size()) slots_in_use_[slot] = false;
}

std::string JailHost::NextJailName() {
  std::lock_guard<std::mutex> lock(mu_);
  return "jail-" + std::to_string(next_jail_id_++);
}

}  // namespace airlock::jail
