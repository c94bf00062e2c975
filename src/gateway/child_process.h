// A downstream server process spawned by airlock with fork/exec: RAII owner
// of the process (its own process group) and of the pipes to its stdin,
// stdout and (optionally) stderr.
//
// The child gets exactly the environment it is given (never airlock's own),
// no other inherited descriptors (everything above 2 is closed), runs in its
// own process group, and is terminated and reaped when the
// ChildProcess is destroyed: stdin is closed, then SIGTERM to the group after
// a short grace period, then SIGKILL.
#ifndef AIRLOCK_GATEWAY_CHILD_PROCESS_H_
#define AIRLOCK_GATEWAY_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock::gateway {

struct SpawnOptions {
  std::string command;             // a path, or a name searched in `search_path`
  std::vector<std::string> args;   // argv[1..]
  std::vector<std::string> env;    // "KEY=VALUE", the complete environment
  std::string cwd;                 // empty: inherit
  std::string search_path;         // PATH used to find `command` when it has no '/'
  bool capture_stderr = true;      // false: stderr goes to /dev/null
};

class ChildProcess {
 public:
  // Starts the process. Fails if the command cannot be found or executed
  // (the exec error is reported back from the child through a CLOEXEC pipe).
  static StatusOr<std::unique_ptr<ChildProcess>> Spawn(const SpawnOptions& options);

  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdin_fd() const { return stdin_.get(); }
  int stdout_fd() const { return stdout_.get(); }
  int stderr_fd() const { return stderr_.get(); }  // -1 unless captured

  // Closes our end of the child's stdin (the MCP way to ask it to exit).
  void CloseStdin() { stdin_.Reset(); }

  // Terminates (grace, SIGTERM, SIGKILL to the process group) and reaps.
  // Idempotent. Returns the wait status, or -1 if it was already reaped.
  int TerminateAndReap(std::chrono::milliseconds grace = std::chrono::milliseconds(100));

 private:
  ChildProcess() = default;
  bool WaitForExit(std::chrono::milliseconds budget);

  pid_t pid_ = -1;
  UniqueFd stdin_;
  UniqueFd stdout_;
  UniqueFd stderr_;
};

// Finds an executable `name` in a colon-separated `path` ("" if none).
std::string FindExecutable(const std::string& name, const std::string& path);

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_CHILD_PROCESS_H_
