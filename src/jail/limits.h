// Resource limits applied to one program run inside a jail.
#ifndef AIRLOCK_JAIL_LIMITS_H_
#define AIRLOCK_JAIL_LIMITS_H_

#include <cstdint>

namespace airlock::jail {

// Limits enforced by the supervisor (wall clock, output) and by the kernel
// (rlimits in the program's process, cgroup limits on the whole jail).
struct Limits {
  uint64_t wall_ms = 10'000;              // supervisor deadline (timerfd)
  uint64_t cpu_ms = 0;                    // RLIMIT_CPU; 0 = wall_ms rounded up + 1 s
  uint64_t max_file_bytes = 64ull << 20;  // RLIMIT_FSIZE
  uint32_t max_open_files = 256;          // RLIMIT_NOFILE
  uint64_t max_stdout_bytes = 1ull << 20; // past this the run is killed: output_limit
  uint64_t max_stderr_bytes = 1ull << 20;
  // false: output past the caps is read and discarded (the *_truncated flags
  // say so) and the program keeps running.
  bool kill_on_output_limit = true;
  uint32_t max_stack_bytes = 8u << 20;    // RLIMIT_STACK
};

// What airlock-init reads back of a run's output files. Its defaults are
// the defaults of every request that carries these caps (jail.h,
// runtimes/), so they are written once.
struct OutputFileLimits {
  uint32_t max_files = 32;                  // files returned
  uint64_t max_file_bytes = 8u << 20;       // bytes read from each
  uint64_t max_total_bytes = 8u << 20;      // bytes read from all together
};

// Limits on the jail as a whole (cgroup), fixed when the jail is created.
struct JailLimits {
  uint64_t memory_bytes = 256ull << 20;   // memory.max / memory.limit_in_bytes, swap off
  uint32_t max_pids = 64;                 // pids.max (threads count)
  uint64_t workdir_bytes = 64ull << 20;   // tmpfs size= for /work (and /tmp)
  uint64_t workdir_inodes = 4096;         // tmpfs nr_inodes=
  uint32_t cpu_quota_percent = 100;       // cpu.max / cfs quota: 100 = one core
};

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_LIMITS_H_
