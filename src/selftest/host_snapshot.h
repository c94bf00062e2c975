// A snapshot of host state the jail must not change: mounts in the
// supervisor's mount namespace, the supervisor's descendant processes and
// the per-jail cgroup directories under this process's `airlock-<pid>`
// cgroup parents. Comparing a snapshot taken after a run with one taken
// before names everything left behind.
#ifndef AIRLOCK_SELFTEST_HOST_SNAPSHOT_H_
#define AIRLOCK_SELFTEST_HOST_SNAPSHOT_H_

#include <sys/types.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace airlock::selftest {

struct HostSnapshot {
  std::set<std::string> mounts;       // "mount point (fstype source)" from /proc/self/mountinfo
  std::set<std::string> descendants;  // "pid cmdline" of every process below this one
  std::set<std::string> cgroup_dirs;  // directories below any airlock-<our pid> cgroup parent
};

HostSnapshot TakeHostSnapshot();

// Human-readable descriptions of what `after` has that `before` does not.
std::vector<std::string> LeftBehind(const HostSnapshot& before, const HostSnapshot& after);

// Takes snapshots until nothing is left behind compared with `before` or
// `timeout_ms` passes (teardown runs off the request path); returns what
// is still left (empty: nothing).
std::vector<std::string> AwaitNothingLeftBehind(const HostSnapshot& before, int timeout_ms = 3000);

// Host processes whose command line contains `needle`, as "pid cmdline".
std::vector<std::string> ProcessesWithCmdline(std::string_view needle);

}  // namespace airlock::selftest

#endif  // AIRLOCK_SELFTEST_HOST_SNAPSHOT_H_
