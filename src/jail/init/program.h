// Starting one program inside the jail (run by airlock-init, PID 1).
//
// The child drops into a nested user namespace where only uid/gid 65534 is
// mapped, so it has no capability over the jail's mount, pid or network
// namespaces; then: new session, rlimits, cwd, closed fds, no-new-privs,
// seccomp, execve. Errors before execve come back over a close-on-exec pipe.
#ifndef AIRLOCK_JAIL_INIT_PROGRAM_H_
#define AIRLOCK_JAIL_INIT_PROGRAM_H_

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "jail/seccomp_policy.h"

namespace airlock::jail {

struct ProgramSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd = "/work";
  uint32_t sandbox_uid = 65534;
  uint64_t cpu_seconds = 0;  // 0: no RLIMIT_CPU
  uint64_t max_file_bytes = 0;
  uint64_t max_open_files = 256;
  uint64_t max_stack_bytes = 8u << 20;
  BpfProgram seccomp;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int bridge_fd = -1;  // becomes fd 3 of the program when >= 0
  int resume_fd = -1;  // becomes fd 4 when >= 0 (with a bridge: a pre-started code-mode program)
};

struct ProgramExit {
  int exit_code = -1;
  int signal = 0;
  uint64_t cpu_ms = 0;
  std::string exec_error;  // non-empty if the program never started
};

// A program that has been started (its execve succeeded, or it failed with
// exec_error) and not yet waited for.
struct StartedProgram {
  pid_t pid = -1;          // -1 if fork itself failed
  std::string exec_error;  // non-empty if the program never started
};

// Forks and starts the program; returns once its execve succeeded or failed.
StartedProgram StartProgram(const ProgramSpec& spec);

// Waits for a started program, reaping every other process of the jail on
// the way; then kills whatever it left behind. Carries over exec_error.
ProgramExit WaitProgram(const StartedProgram& started);

// StartProgram, then WaitProgram.
ProgramExit RunProgram(const ProgramSpec& spec);

// For a program that stays running between turns (a session): SIGKILLs
// every other process of the jail (all but PID 1 and `keep`), reaps what
// init may reap, and returns once none is left alive (bounded: a program
// whose own threads keep forking gets up to ~0.5 s of passes). When `keep`
// has exited meanwhile it is reaped too and its exit is returned.
std::optional<ProgramExit> KillAllBut(pid_t keep);

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_INIT_PROGRAM_H_
