// JailHost: everything jails share on one machine, created once per process.
//
// It locates and opens the `airlock-init` binary, checks which isolation
// layers the kernel offers (user namespaces, cgroups, seccomp), owns the
// CgroupManager, and hands out host uids for jails when running as root
// (each concurrent jail gets its own unprivileged host uid, so no two jails
// share a uid; unprivileged supervisors map their own uid).
//
// Strict by default: Create() fails when a layer is missing unless
// HostOptions::allow_degraded is set, and `airlock doctor` explains why.
#ifndef AIRLOCK_JAIL_HOST_H_
#define AIRLOCK_JAIL_HOST_H_

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "jail/cgroup.h"

namespace airlock::jail {

struct HostOptions {
  std::string init_path;         // default: airlock-init next to /proc/self/exe
  bool allow_degraded = false;   // run without cgroup limits if unavailable
  uid_t uid_base = 200000;       // root only: host uids base .. base+uid_count-1
  uint32_t uid_count = 4096;
};

// One isolation layer as reported by `airlock doctor`.
struct LayerStatus {
  std::string name;
  bool available = false;
  bool required = true;
  std::string detail;
};

class JailHost {
 public:
  static StatusOr<std::unique_ptr<JailHost>> Create(const HostOptions& options = {});
  // Probes without creating anything; used by `airlock doctor`.
  static std::vector<LayerStatus> Probe(const HostOptions& options = {});

  int init_fd() const { return init_fd_.get(); }
  CgroupManager* cgroups() { return cgroups_.get(); }
  bool privileged() const { return privileged_; }

  // Host uid/gid for a new jail; Release gives the slot back.
  struct Identity {
    int slot = -1;
    uid_t uid = 0;
    gid_t gid = 0;
  };
  StatusOr<Identity> AcquireIdentity();
  void ReleaseIdentity(int slot);

  // Unique, filesystem-safe name for a jail's cgroup.
  std::string NextJailName();

 private:
  JailHost() = default;
  HostOptions options_;
  UniqueFd init_fd_;
  std::unique_ptr<CgroupManager> cgroups_;
  bool privileged_ = false;
  std::mutex mu_;
  std::vector<bool> slots_in_use_;
  uint64_t next_jail_id_ = 0;
};

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_HOST_H_
