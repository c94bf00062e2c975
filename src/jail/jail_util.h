// Helpers shared by the files that implement Jail (jail.cc, jail_turn.cc):
// waiting on init, the program and files parts of init messages, SIGPIPE
// blocking around the supervisor's writes. Not for use outside src/jail.
#ifndef AIRLOCK_JAIL_JAIL_UTIL_H_
#define AIRLOCK_JAIL_JAIL_UTIL_H_

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"
#include "jail/cgroup.h"
#include "jail/jail.h"

namespace airlock::jail::internal {

using Clock = std::chrono::steady_clock;

// How long init may take to answer a set-up message (generous: set-up is
// ~10 ms, but hosts get loaded).
inline constexpr int kSetupTimeoutMs = 30'000;

// Waits until `fd` is readable or `pidfd` signals the process died.
Status WaitReadable(int fd, int pidfd, int timeout_ms);

// The RLIMIT_CPU seconds for `lim`: cpu_ms rounded up, else the wall clock
// rounded up plus one second (a backstop behind the supervisor's timer).
uint64_t CpuSeconds(const Limits& lim);

// The part of an exec or start message that describes the program.
nlohmann::json ProgramMessage(const char* type, const ExecRequest& request);

nlohmann::json FilesMessage(const std::vector<FileEntry>& files);

// Reads init's "files", "files_skipped" and "files_left" (an exit or
// turn_done message) into `result`.
void ReadCollectedFiles(const nlohmann::json& msg, ExecResult* result);

// Blocks SIGPIPE in the calling thread while alive, so that writing stdin to
// a program that exited without reading it is EPIPE, not a dead supervisor;
// consumes a SIGPIPE that became pending meanwhile and restores the mask.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~ScopedSigpipeBlock() {
    if (!was_pending_) {
      timespec zero{};
      while (sigtimedwait(&set_, nullptr, &zero) == SIGPIPE) {}
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t set_, old_;
  bool was_pending_ = false;
};

uint64_t MsSince(Clock::time_point t);

// A timerfd (non-blocking) that fires once, `wall_ms` from now (at once for 0).
UniqueFd WallClockTimer(uint64_t wall_ms);

// What `cgroup` (may be null) used since `before`: CPU, peak memory, OOM
// kills, whether the pids limit was hit.
void FillCgroupUsage(const Cgroup* cgroup, const CgroupStats& before, ExecResult* result);

}  // namespace airlock::jail::internal

#endif  // AIRLOCK_JAIL_JAIL_UTIL_H_
