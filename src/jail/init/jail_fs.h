// Builds the jail's filesystem from inside fresh namespaces (run by
// airlock-init as root of the jail's user namespace, before anything else).
//
// Steps: make every mount private; put a scratch tmpfs on /tmp and pivot into
// it so the host root is reachable only at /oldroot; build the new root on a
// small tmpfs with read-only nosuid nodev binds of the allowed host paths
// (symlinks such as /bin -> usr/bin are recreated as symlinks); a minimal
// /dev of bind-mounted device nodes; a fresh hidepid procfs with /proc/sys
// read-only; one size- and inode-limited tmpfs behind /work and /tmp;
// synthetic /etc/passwd, /etc/group and /etc/hosts; then remount the root
// read-only, pivot into it and detach the old root entirely.
#ifndef AIRLOCK_JAIL_INIT_JAIL_FS_H_
#define AIRLOCK_JAIL_INIT_JAIL_FS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace airlock::jail {

struct FsSetup {
  std::vector<std::string> ro_paths;       // absolute host paths, bound at the same path
  std::vector<std::string> optional_paths; // like ro_paths but skipped if missing
  // {host path, jail path}: required read-only binds at another place.
  std::vector<std::pair<std::string, std::string>> mapped_paths;
  // > 0: mapped_paths[i]'s source is open (O_PATH) at fd mapped_fds_from + i
  // when that fd is open (the jail's clone opened it; see jail.cc), and is
  // bound from there instead of by path. The fds are closed once the
  // filesystem is built, whatever happens.
  int mapped_fds_from = 0;
  uint64_t work_bytes = 64ull << 20;
  uint64_t work_inodes = 4096;
  std::string hostname = "airlock";
  uint32_t sandbox_uid = 65534;  // uid/gid programs run as (for /etc/passwd)
};

// Host paths every jail gets (the dynamic loader, libc, shells, coreutils).
std::vector<std::string> BaseReadOnlyPaths();

// Performs the whole setup; on success the process's root and cwd are the
// new root and /work. Must run in a new mount namespace with CAP_SYS_ADMIN.
Status BuildJailFilesystem(const FsSetup& setup);

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_INIT_JAIL_FS_H_
