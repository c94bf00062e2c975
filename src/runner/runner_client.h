// The MCP server's handle on the runner process: a CodeExecutor that runs
// nothing itself and forwards every run over the runner channel.
//
// RunnerClient
//  - spawns the runner (SpawnRunnerProcess by default, injectable for tests)
//    from a supervisor thread that also reads the channel and hands each
//    frame to the run waiting for its id;
//  - admits at most `max_concurrent` runs at once, with a FIFO queue of
//    `max_queue` more (reported as progress "queued"); past that Run()
//    returns at once with error_code "busy";
//  - keeps one caller (RunRequest::caller) from taking every slot: a caller
//    holds at most `max_concurrent_per_caller` slots (more of its runs
//    wait in the queue while other callers' runs pass them) and at most
//    `max_queue_per_caller` places in the queue (past that: "busy", saying
//    it is the per-caller limit). Runs without a caller are not limited;
//  - on cancellation sends {"type":"cancel"} and waits (bounded by
//    `cancel_grace`) for the runner's answer, then returns status
//    internal_error with error_code "cancelled";
//  - when the runner dies, fails every in-flight run at once with error_code
//    "runner_unavailable", then restarts it with exponential backoff;
//  - relays a code-mode run's bridge frames to its BridgeHandler (on the
//    read-loop thread; handlers must not block) and the replies back;
//  - never falls back to running code in this process: if no runner is up,
//    Run() returns error_code "runner_unavailable".
//
//   RunnerClient client(RunnerClientOptions{});
//   if (Status st = client.Start(); !st.ok()) LOG(st);  // keeps retrying
//   CancelToken cancel;
//   RunResult r = client.Run(request, progress, cancel);
//
// Thread-safe. Every Run()/Languages() call must have returned before the
// client is destroyed.
#ifndef AIRLOCK_RUNNER_RUNNER_CLIENT_H_
#define AIRLOCK_RUNNER_RUNNER_CLIENT_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "base/frame.h"
#include "runner/runner_backend.h"
#include "runner/spawned_runner.h"
#include "runtimes/code_executor.h"

namespace airlock::runner {

struct RunnerClientOptions {
  size_t max_concurrent = 0;  // runs in flight; 0: hardware_concurrency()
  size_t max_queue = 16;      // runs waiting for a slot
  size_t max_concurrent_per_caller = 0;  // slots one caller may hold; 0: no per-caller limit
  size_t max_queue_per_caller = 0;       // queue places one caller may hold; 0: no per-caller limit
  // Starts a runner. Default: SpawnRunnerProcess("/proc/self/exe").
  std::function<StatusOr<SpawnedRunner>()> spawn;
  // The runner host's address when `spawn` connects to one
  // (remote/remote_link.h); empty: the local runner process. Error messages
  // name which of the two could not be reached.
  std::string runner_host;
  std::chrono::milliseconds start_timeout{10000};  // spawn until "hello"
  std::chrono::milliseconds cancel_grace{5000};    // cancel until "result"
  std::chrono::milliseconds languages_timeout{10000};
  std::chrono::milliseconds languages_ttl{30000};  // cache of Languages()
  std::chrono::milliseconds session_timeout{60000};  // OpenSession/CloseSession until answered
  // PauseSession/ResumeSession/ForkSession until answered: a snapshot turn
  // and a restore (a new jail and a restore turn) are each bounded by a
  // minute in the runner (sandbox_session.cc); a fork does both.
  std::chrono::milliseconds checkpoint_timeout{150000};
  std::chrono::milliseconds health_timeout{1000};   // Health() until the runner answers
  // Called (on the reading thread: it must not block) when a runner host
  // says it is draining, with the sessions it asks this gateway to move
  // (remote/runner_fleet.h moves them).
  std::function<void(const std::vector<std::string>& sessions)> on_draining;
  std::chrono::milliseconds restart_backoff_min{100};
  std::chrono::milliseconds restart_backoff_max{5000};
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
};

class RunnerClient : public RunnerBackend {
 public:
  explicit RunnerClient(RunnerClientOptions options = {});
  ~RunnerClient() override;  // Stop()

  RunnerClient(const RunnerClient&) = delete;
  RunnerClient& operator=(const RunnerClient&) = delete;

  // Starts the supervisor and waits (up to start_timeout) for the runner's
  // "hello". Unavailable if it did not come up; the supervisor keeps
  // retrying in the background either way. Run() starts it lazily too.
  Status Start() override;

  // Starts the supervisor (connecting in the background) without waiting.
  void Connect();

  // Fails pending runs, closes the channel (the runner cancels its runs and
  // exits), waits briefly, then kills and reaps it. Idempotent; final.
  void Stop() override;

  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                          CancelToken& cancel, runtimes::BridgeHandler* bridge = nullptr) override;

  // Asks the runner (answers are cached for languages_ttl). Empty when the
  // runner is unavailable.
  std::vector<runtimes::LanguageInfo> Languages() override;

  // Sessions live in the runner: a runner restart loses them (their runs
  // then get E_SESSION_NOT_FOUND from the new runner).
  Status OpenSession(const runtimes::SessionSpec& spec) override;
  Status CloseSession(const std::string& id) override;
  // Checkpoints, in the runner ("session_pause", "session_resume",
  // "session_fork" frames, answered like "session_open"); bounded by
  // checkpoint_timeout.
  Status PauseSession(const std::string& id) override;
  Status ResumeSession(const std::string& id) override;
  Status ForkSession(const std::string& id, const runtimes::SessionSpec& copy) override;
  // Moving a session ("session_export", "session_import" frames, answered
  // like "session_open"; image bytes base64 in the frames); bounded by
  // checkpoint_timeout each.
  StatusOr<runtimes::SessionImageChunk> ExportSession(const std::string& id, uint64_t offset) override;
  Status ImportSession(const runtimes::SessionSpec& spec, uint64_t offset, const std::string& data,
                       bool last) override;

  // Tells a draining runner host that this gateway moved what it could of
  // the sessions its "draining" listed (it stops waiting for this gateway).
  // Fire and forget.
  void SayDrained();
  // The current runner's pid, or -1 when none is up (or it is remote). For
  // status and tests.
  pid_t runner_pid() const;

  // A snapshot for placement (remote/runner_fleet.h); never blocks on I/O.
  struct Load {
    bool ready = false;  // a runner is connected and said hello
    size_t in_flight = 0;
    size_t queued = 0;
    size_t max_concurrent = 0;
  };
  Load CurrentLoad() const;

  // Ends the current connection as if the runner had gone away: its runs in
  // flight fail at once with runner_unavailable and `reason`, and the
  // supervisor reconnects with backoff. For a runner host that stopped
  // answering health checks. No-op when not connected.
  void DropConnection(const std::string& reason);

  // A round trip to the runner ("ping"), bounded by `timeout`, without
  // waiting for a runner that is not connected (Unavailable at once).
  Status Ping(std::chrono::milliseconds timeout);

  // For operators (the console's live page): {up, pid, starts, restarts,
  // in_flight, queued, max_concurrent, max_queue, error} from this side,
  // plus the runner's own Health() (pool, sessions) when it answers within
  // options.health_timeout. Never starts a runner or waits for one to start.
  nlohmann::json Health() override;

 private:
  struct Connection;  // a live channel to one runner
  struct Pending;     // one run or query waiting for frames
  enum class State { kNotStarted, kStarting, kReady, kFailed, kStopped };

  void EnsureStartedLocked();
  void SupervisorLoop();
  Status AwaitHello(SpawnedRunner& runner);
  void ReadLoop(const std::shared_ptr<Connection>& conn);
  void FailPending(uint64_t generation, const std::string& message);
  // Hands a "bridge"/"bridge_error" frame to the run's BridgeHandler.
  void RelayBridgeFrame(const std::shared_ptr<Connection>& conn, uint64_t id, const std::string& type,
                        const nlohmann::json& message);
  // A "bridge_socket" frame's descriptor: run `id`'s program's bridge, read
  // here from now on (runtimes::BridgeRelay::Adopt into its handler).
  void AdoptBridgeSocket(uint64_t id, UniqueFd socket);
  bool SleepUnlessStopping(std::chrono::milliseconds d);

  // Waits for a ready runner (bounded); null if none.
  std::shared_ptr<Connection> AwaitRunner(CancelToken* cancel);
  // Registers `p` on `conn` and sends `message` (with "id" filled in).
  Status Send(const std::shared_ptr<Connection>& conn, const std::shared_ptr<Pending>& p,
              nlohmann::json message);
  void Unregister(const Pending& p);
  // Sends a query and waits (bounded) for the frame that answers it.
  StatusOr<nlohmann::json> Query(nlohmann::json message, std::chrono::milliseconds timeout);
  void ReleaseSlot(const std::string& caller);
  // Whether `caller` may take one more slot (mu_ held).
  bool CallerUnderSlotLimitLocked(const std::string& caller) const;
  // Gives free slots to the oldest queued runs whose callers are under
  // their slot limit (mu_ held).
  void AdmitQueuedLocked();
  std::string UnavailableMessage() const;
  // "the runner host H is unreachable" or "the local code runner process
  // could not be started" (options_.runner_host).
  std::string NotStartedPrefix() const;
  // Who runs the code, for messages: "the runner host H" when remote, else
  // "the code runner process".
  std::string Peer() const;

  const RunnerClientOptions options_;
  const size_t max_concurrent_;
  UniqueFd stop_event_;  // eventfd; readable once Stop() begins

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable state_cv_;
  State state_ = State::kNotStarted;
  bool stopping_ = false;
  std::string last_error_;
  std::string drop_reason_;  // set by DropConnection for the current connection
  std::shared_ptr<Connection> conn_;
  pid_t runner_pid_ = -1;
  uint64_t generation_ = 0;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::shared_ptr<Pending>> pending_;  // by id
  size_t in_flight_ = 0;
  std::deque<std::shared_ptr<Pending>> queue_;
  // Per caller (RunRequest::caller, non-empty only): slots held and queue
  // places held; entries at zero are erased.
  std::map<std::string, size_t> caller_in_flight_;
  std::map<std::string, size_t> caller_queued_;
  std::vector<runtimes::LanguageInfo> languages_cache_;
  std::chrono::steady_clock::time_point languages_expiry_{};
  std::thread supervisor_;
};

}  // namespace airlock::runner

#endif  // AIRLOCK_RUNNER_RUNNER_CLIENT_H_
