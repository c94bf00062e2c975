// A runner child process and the server's end of its channel.
//
// SpawnedRunner is move-only RAII: destroying it kills (SIGKILL) and reaps
// the child, so a runner can never outlive its handle or linger as a zombie.
// It holds a pidfd when the kernel offers pidfd_open (signals then cannot hit
// a recycled pid); otherwise it falls back to the plain pid.
//
//   AIRLOCK_ASSIGN_OR_RETURN(SpawnedRunner runner, SpawnRunnerProcess("/proc/self/exe"));
//   WriteJsonFrame(runner.channel_fd(), {{"type", "ping"}, {"id", 1}});
#ifndef AIRLOCK_RUNNER_SPAWNED_RUNNER_H_
#define AIRLOCK_RUNNER_SPAWNED_RUNNER_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock::runner {

class SpawnedRunner {
 public:
  SpawnedRunner() = default;
  // Adopts child `pid` (which must be a child of this process) and the
  // server end of its channel.
  SpawnedRunner(UniqueFd channel, pid_t pid);
  // A runner reached over a link instead of forked (remote/remote_link.h):
  // no process of ours; `link` (the pump that serves `channel`) lives until
  // Reset(), and `describe_loss` says why the channel ended ("runner host
  // 10.0.0.7:7700: UNAVAILABLE: Socket closed").
  static SpawnedRunner Linked(UniqueFd channel, std::shared_ptr<void> link,
                              std::function<std::string()> describe_loss);
  ~SpawnedRunner();

  SpawnedRunner(SpawnedRunner&& other) noexcept;
  SpawnedRunner& operator=(SpawnedRunner&& other) noexcept;
  SpawnedRunner(const SpawnedRunner&) = delete;
  SpawnedRunner& operator=(const SpawnedRunner&) = delete;

  int channel_fd() const { return channel_.get(); }
  UniqueFd TakeChannel() { return std::move(channel_); }
  pid_t pid() const { return pid_; }
  bool reaped() const { return reaped_; }
  bool linked() const { return link_ != nullptr; }
  // Why a linked runner's channel ended ("" for a forked runner).
  std::string DescribeLoss() const { return describe_loss_ ? describe_loss_() : std::string(); }

  // Waits up to `timeout` for the child to exit and reaps it. Returns the
  // wait status (as from waitpid), or nullopt if it is still running.
  std::optional<int> WaitFor(std::chrono::milliseconds timeout);

  // Sends SIGKILL (no-op once reaped).
  void Kill();

  // Kills and reaps the child (or tears the link down), closes the channel.
  // Idempotent.
  void Reset();

 private:
  UniqueFd channel_;
  UniqueFd pidfd_;
  pid_t pid_ = -1;
  bool reaped_ = true;
  int wait_status_ = 0;
  std::shared_ptr<void> link_;
  std::function<std::string()> describe_loss_;
};

// "signal 9" / "exit code 3": a wait status for messages.
std::string DescribeWaitStatus(int wait_status);

// The default spawn: a socketpair, then fork + exec of
// `executable runner --channel-fd N` with a minimal environment (PATH only),
// stdin/stdout on /dev/null (stdout may be the MCP stdio channel), default
// signal dispositions and mask, and PR_SET_PDEATHSIG(SIGKILL). Only the
// child's end of the channel is inherited; every other fd of ours is
// CLOEXEC. Call it from a thread that lives as long as the runner should:
// the death signal fires when the forking *thread* exits.
// `extra_args` follow `runner --channel-fd N` (e.g. "--config", path).
StatusOr<SpawnedRunner> SpawnRunnerProcess(const std::string& executable,
                                            const std::vector<std::string>& extra_args = {});

}  // namespace airlock::runner

#endif  // AIRLOCK_RUNNER_SPAWNED_RUNNER_H_
