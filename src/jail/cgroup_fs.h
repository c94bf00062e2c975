// Small file helpers for cgroup control files (internal to the cgroup module).
//
// Every helper returns a Status whose message names the path and the
// strerror of the failing call. Writes are one write(2) each, as cgroupfs
// requires; reads slurp the (small) file.
#ifndef AIRLOCK_JAIL_CGROUP_FS_H_
#define AIRLOCK_JAIL_CGROUP_FS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace airlock::jail::cgroup_fs {

using Deadline = std::chrono::steady_clock::time_point;

// Whole contents of `path`.
StatusOr<std::string> ReadFile(const std::string& path);

// Writes `data` to the existing file `path` with a single write(2).
Status WriteFile(const std::string& path, std::string_view data);

// errno-preserving variant: returns 0 or the errno of the failed open/write.
int WriteFileErrno(const std::string& path, std::string_view data);

bool Exists(const std::string& path);

// A decimal number (surrounding whitespace ignored); "max" reads as UINT64_MAX.
StatusOr<uint64_t> ReadUint(const std::string& path);

// The value of `key` in a flat-keyed file ("key value" per line, as in
// memory.events, cpu.stat, pids.events, memory.oom_control, cgroup.events).
std::optional<uint64_t> ReadKeyedValue(const std::string& path, std::string_view key);

// Pids listed one per line (cgroup.procs).
StatusOr<std::vector<pid_t>> ReadPids(const std::string& path);

// Whitespace-separated words (cgroup.controllers, cgroup.subtree_control).
std::vector<std::string> SplitWords(std::string_view text);

// mkdir(path, 0755). The Status code is kFailedPrecondition when the directory
// already exists.
Status MakeDir(const std::string& path);

// rmdir(path), retried while the kernel says EBUSY and `deadline` is ahead.
// A missing directory counts as removed.
Status RemoveDir(const std::string& path, Deadline deadline);

// Removes the cgroup directory `path` and every cgroup below it (children
// first). Used for stale trees left by a crashed process with the same pid.
Status RemoveTree(const std::string& path, Deadline deadline);

}  // namespace airlock::jail::cgroup_fs

#endif  // AIRLOCK_JAIL_CGROUP_FS_H_
