#include "runner/runner_client.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>

#include "base/encoding.h"
#include "runtimes/bridge_relay.h"

namespace airlock::runner {
namespace {

using Json = nlohmann::json;
using runtimes::InternalErrorResult;
using runtimes::RunPhase;
using runtimes::RunResult;
using Clock = std::chrono::steady_clock;

void Log(const std::string& message) {
  std::fprintf(stderr, "airlock: runner client: %s\n", message.c_str());
}

std::optional<RunPhase> PhaseFromName(const std::string& name) {
  for (RunPhase p : {RunPhase::kQueued, RunPhase::kStarting, RunPhase::kCompiling,
                     RunPhase::kRunning, RunPhase::kDone}) {
    if (name == runtimes::RunPhaseName(p)) return p;
  }
  return std::nullopt;
}

int MillisUntil(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

void SignalEventFd(int fd) {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd, &one, sizeof one);
}

}  // namespace

struct RunnerClient::Connection {
  UniqueFd fd;
  uint64_t generation = 0;
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  std::mutex write_mu;

  Status Write(const Json& message) {
    std::lock_guard<std::mutex> lock(write_mu);
    return WriteJsonFrame(fd.get(), message, max_frame_bytes);
  }
};

struct RunnerClient::Pending {
  UniqueFd wake{eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
  // Guarded by RunnerClient::mu_.
  uint64_t id = 0;
  uint64_t generation = 0;
  bool admitted = false;  // holds a concurrency slot
  std::string caller;     // RunRequest::caller, for the per-caller limits
  std::deque<RunPhase> progress;
  std::optional<Json> reply;            // "result", "languages", "pong", "session" or "health" frame
  std::optional<std::string> failure;   // the runner went away

  // Code mode: the run's bridge handler, called by the read loop. Cleared
  // (under bridge_mu) before Run() returns, so the handler is never used
  // after its owner is done with the run.
  std::mutex bridge_mu;
  runtimes::BridgeHandler* bridge = nullptr;
  // The program's bridge socket when the runner handed it over
  // ("bridge_socket"): read here, straight into `bridge`. Finished (every
  // frame the program sent handed to `bridge`) before Run() returns.
  std::unique_ptr<runtimes::BridgeRelay> relay;

  void Signal() { SignalEventFd(wake.get()); }

  // Blocks until signalled, `cancel_fd` is readable or `timeout_ms` passes.
  void Wait(int cancel_fd, int timeout_ms) {
    pollfd fds[2] = {{wake.get(), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    const int n = cancel_fd >= 0 ? 2 : 1;
    if (poll(fds, n, timeout_ms) > 0 && (fds[0].revents & POLLIN)) {
      uint64_t value;
      [[maybe_unused]] ssize_t r = read(wake.get(), &value, sizeof value);
    }
  }
};

RunnerClient::RunnerClient(RunnerClientOptions options)
    : options_(std::move(options)),
      max_concurrent_(options_.max_concurrent > 0
                          ? options_.max_concurrent
                          : std::max(1u, std::thread::hardware_concurrency())),
      stop_event_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

RunnerClient::~RunnerClient() { Stop(); }

pid_t RunnerClient::runner_pid() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runner_pid_;
}

Json RunnerClient::Health() {
  Json out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool up = state_ == State::kReady && !stopping_;
    out = {{"up", up},
           {"pid", up ? Json(runner_pid_) : Json(nullptr)},
           {"starts", generation_},
           {"restarts", generation_ > 0 ? generation_ - 1 : 0},
           {"in_flight", in_flight_},
           {"queued", queue_.size()},
           {"max_concurrent", max_concurrent_},
           {"max_queue", options_.max_queue},
           {"error", up ? std::string() : last_error_}};
  }
  if (out["up"].get<bool>()) {
    StatusOr<Json> reply = Query({{"type", "health"}}, options_.health_timeout);
    if (reply.ok() && reply->contains("health") && (*reply)["health"].is_object()) {
      out.update((*reply)["health"]);
    } else if (!reply.ok()) {
      out["error"] = reply.status().message();
    }
  }
  return out;
}

void RunnerClient::Connect() {
  std::lock_guard<std::mutex> lock(mu_);
  EnsureStartedLocked();
}

RunnerClient::Load RunnerClient::CurrentLoad() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {.ready = state_ == State::kReady && !stopping_,
          .in_flight = in_flight_,
          .queued = queue_.size(),
          .max_concurrent = max_concurrent_};
}

void RunnerClient::DropConnection(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!conn_ || state_ != State::kReady) return;
  drop_reason_ = reason;
  shutdown(conn_->fd.get(), SHUT_RDWR);  // the read loop sees EOF; the supervisor fails its runs
}

Status RunnerClient::Ping(std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::kReady || stopping_) return Unavailable(last_error_.empty() ? "not connected" : last_error_);
  }
  StatusOr<Json> reply = Query({{"type", "ping"}}, timeout);
  return reply.ok() ? OkStatus() : reply.status();
}

void RunnerClient::EnsureStartedLocked() {
  if (state_ != State::kNotStarted || stopping_) return;
  state_ = State::kStarting;
  // The supervisor forks the runner: PR_SET_PDEATHSIG is tied to the forking
  // thread, so it must be this long-lived thread, not a caller's.
  supervisor_ = std::thread([this] { SupervisorLoop(); });
}

Status RunnerClient::Start() {
  std::unique_lock<std::mutex> lock(mu_);
  EnsureStartedLocked();
  const auto deadline = Clock::now() + options_.start_timeout + std::chrono::seconds(1);
  state_cv_.wait_until(lock, deadline, [&] { return state_ != State::kStarting; });
  if (state_ == State::kReady) return OkStatus();
  if (state_ == State::kStopped) return Unavailable("the runner client is stopped");
  return Unavailable(NotStartedPrefix() + ": " + (last_error_.empty() ? std::string("timed out") : last_error_));
}

void RunnerClient::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      SignalEventFd(stop_event_.get());
      // EOF for both sides: our reader wakes, the runner cancels and exits.
      if (conn_) shutdown(conn_->fd.get(), SHUT_RDWR);
      for (auto& q : queue_) q->Signal();
      state_cv_.notify_all();
    }
    if (!supervisor_.joinable()) {
      state_ = State::kStopped;
      return;
    }
  }
  std::thread supervisor;
  {
    std::lock_guard<std::mutex> lock(mu_);
    supervisor = std::move(supervisor_);
  }
  if (supervisor.joinable()) supervisor.join();
}

bool RunnerClient::SleepUnlessStopping(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  state_cv_.wait_for(lock, d, [&] { return stopping_; });
  return !stopping_;
}

Status RunnerClient::AwaitHello(SpawnedRunner& runner) {
  pollfd fds[2] = {{runner.channel_fd(), POLLIN, 0}, {stop_event_.get(), POLLIN, 0}};
  const auto deadline = Clock::now() + options_.start_timeout;
  for (;;) {
    const int n = poll(fds, 2, MillisUntil(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("poll the runner channel");
    if (n == 0) {
      return DeadlineExceeded("the runner did not report ready within " +
                              std::to_string(options_.start_timeout.count()) + " ms");
    }
    if (fds[1].revents) return Cancelled("stopping");
    break;
  }
  StatusOr<Json> hello = ReadJsonFrame(runner.channel_fd(), options_.max_frame_bytes);
  if (!hello.ok() && runner.linked()) {
    return Unavailable("could not reach it (" + runner.DescribeLoss() + ")");
  }
  if (!hello.ok()) {
    std::optional<int> ws = runner.WaitFor(std::chrono::milliseconds(1000));
    return Unavailable("the runner exited before it was ready (" +
                       (ws ? DescribeWaitStatus(*ws) : hello.status().message()) + ")");
  }
  if (hello->value("type", "") == "fatal") {  // the runner says why it cannot run code
    runner.WaitFor(std::chrono::milliseconds(1000));
    return Unavailable(hello->value("message", std::string("the runner refused to start")));
  }
  if (hello->value("type", "") != "hello") {
    return Internal("the runner's first message was not \"hello\": " + hello->dump(-1, ' ', false,
                        Json::error_handler_t::replace));
  }
  return OkStatus();
}

void RunnerClient::SupervisorLoop() {
  auto backoff = options_.restart_backoff_min;
  auto grow_backoff = [&] { backoff = std::min(backoff * 2, options_.restart_backoff_max); };
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
    }
    StatusOr<SpawnedRunner> spawned = options_.spawn ? options_.spawn()
                                                     : SpawnRunnerProcess("/proc/self/exe");
    Status st = spawned.ok() ? AwaitHello(*spawned) : spawned.status();
    if (!st.ok()) {
      if (spawned.ok()) spawned->Reset();
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_error_ = st.message();
        if (!stopping_) state_ = State::kFailed;
        state_cv_.notify_all();
      }
      if (st.code() != StatusCode::kCancelled) Log("cannot start the code runner: " + st.message());
      if (!SleepUnlessStopping(backoff)) break;
      grow_backoff();
      continue;
    }

    auto conn = std::make_shared<Connection>();
    conn->fd = spawned->TakeChannel();
    conn->max_frame_bytes = options_.max_frame_bytes;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;  // `spawned` going out of scope kills it
      conn->generation = ++generation_;
      conn_ = conn;
      state_ = State::kReady;
      runner_pid_ = spawned->pid();
      last_error_.clear();
      state_cv_.notify_all();
    }
    const auto started = Clock::now();

    ReadLoop(conn);

    bool stopping;
    std::string drop_reason;
    {
      std::lock_guard<std::mutex> lock(mu_);
      conn_.reset();
      runner_pid_ = -1;
      stopping = stopping_;
      drop_reason.swap(drop_reason_);
      if (!stopping) state_ = State::kStarting;  // Run() waits for the restart
      state_cv_.notify_all();
    }
    std::string message;
    if (stopping) {
      spawned->WaitFor(std::chrono::milliseconds(2000));  // graceful: it cancels its runs
      message = "airlock is shutting down; the run was aborted";
    } else if (spawned->linked()) {
      message = (drop_reason.empty() ? spawned->DescribeLoss() : drop_reason) + "; the run was aborted";
      Log(message);
    } else {
      std::optional<int> ws = spawned->WaitFor(std::chrono::milliseconds(1000));
      message = "the code runner process exited unexpectedly (" +
                (ws ? DescribeWaitStatus(*ws) : std::string("it closed its channel; killed")) +
                "); the run was aborted";
      Log(message);
    }
    spawned->Reset();  // kills if still alive, reaps
    FailPending(conn->generation, message);
    if (stopping) break;
    if (Clock::now() - started > options_.restart_backoff_max) backoff = options_.restart_backoff_min;
    if (!SleepUnlessStopping(backoff)) break;
    grow_backoff();
  }
  std::lock_guard<std::mutex> lock(mu_);
  state_ = State::kStopped;
  state_cv_.notify_all();
}

void RunnerClient::ReadLoop(const std::shared_ptr<Connection>& conn) {
  for (;;) {
    std::vector<UniqueFd> fds;  // a "bridge_socket" frame's descriptor
    StatusOr<Json> message = ReadJsonFrame(conn->fd.get(), options_.max_frame_bytes, &fds);
    if (!message.ok()) {
      if (message.status().code() == StatusCode::kInvalidArgument) {
        Log("ignoring a bad frame from the runner: " + message.status().message());
        continue;
      }
      if (message.status().code() != StatusCode::kUnavailable) {
        Log("the runner channel failed: " + message.status().ToString());
      }
      return;
    }
    Json& m = *message;
    auto type_it = m.find("type");
    auto id_it = m.find("id");
    if (type_it == m.end() || !type_it->is_string() || id_it == m.end() ||
        !id_it->is_number_unsigned()) {
      continue;
    }
    const std::string type = type_it->get<std::string>();
    const uint64_t id = id_it->get<uint64_t>();
    if (type == "bridge" || type == "bridge_error") {
      RelayBridgeFrame(conn, id, type, m);
      continue;
    }
    if (type == "bridge_socket") {
      if (fds.size() == 1) AdoptBridgeSocket(id, std::move(fds[0]));
      continue;  // without its descriptor: nothing to read (the run ends on its own)
    }
    if (type == "draining") {
      std::vector<std::string> sessions;
      if (auto list = m.find("sessions"); list != m.end() && list->is_array()) {
        for (const Json& s : *list) {
          if (s.is_string()) sessions.push_back(s.get<std::string>());
        }
      }
      if (options_.on_draining) options_.on_draining(sessions);
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) continue;  // e.g. answered after its caller gave up
    Pending& p = *it->second;
    if (type == "progress") {
      auto phase_it = m.find("phase");
      if (phase_it != m.end() && phase_it->is_string()) {
        if (auto phase = PhaseFromName(phase_it->get<std::string>())) p.progress.push_back(*phase);
      }
    } else if (type == "result" || type == "languages" || type == "pong" || type == "session" ||
               type == "health") {
      p.reply = std::move(m);
    } else {
      continue;
    }
    p.Signal();
  }
}

void RunnerClient::RelayBridgeFrame(const std::shared_ptr<Connection>& conn, uint64_t id, const std::string& type,
                                    const Json& message) {
  std::shared_ptr<Pending> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    p = it->second;
  }
  std::lock_guard<std::mutex> lock(p->bridge_mu);
  if (p->bridge == nullptr) return;
  if (type == "bridge_error") {
    p->bridge->OnBridgeError(message.value("message", std::string("the bridge failed")));
    return;
  }
  auto frame = message.find("frame");
  if (frame == message.end() || !frame->is_string()) return;
  std::weak_ptr<Connection> weak = conn;
  // The handler answers from its own threads; replies for a run that is over
  // are dropped by the runner.
  p->bridge->OnFrame(frame->get<std::string>(), [weak, id](std::string reply) {
    // A failed write means the runner is gone; the run fails on its own.
    if (auto c = weak.lock()) (void)c->Write({{"type", "bridge_reply"}, {"id", id}, {"frame", std::move(reply)}});
  });
}

void RunnerClient::AdoptBridgeSocket(uint64_t id, UniqueFd socket) {
  std::shared_ptr<Pending> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // the run is over: closing the socket ends its bridge
    p = it->second;
  }
  std::lock_guard<std::mutex> lock(p->bridge_mu);
  if (p->bridge == nullptr || p->relay != nullptr) return;
  p->relay = runtimes::BridgeRelay::Adopt(*p->bridge, std::move(socket));
}

void RunnerClient::FailPending(uint64_t generation, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, p] : pending_) {
    if (p->generation == generation && !p->reply) {
      p->failure = message;
      p->Signal();
    }
  }
}

std::shared_ptr<RunnerClient::Connection> RunnerClient::AwaitRunner(CancelToken* cancel) {
  std::unique_lock<std::mutex> lock(mu_);
  EnsureStartedLocked();
  const auto deadline = Clock::now() + options_.start_timeout + options_.restart_backoff_max;
  while ((state_ == State::kStarting || state_ == State::kNotStarted) && !stopping_ &&
         Clock::now() < deadline) {
    if (cancel && cancel->cancelled()) return nullptr;
    state_cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return state_ == State::kReady && !stopping_ ? conn_ : nullptr;
}

std::string RunnerClient::UnavailableMessage() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return "airlock is shutting down; the run was not started";
  if (state_ == State::kFailed) return NotStartedPrefix() + " (" + last_error_ + "); the run was not started";
  if (!options_.runner_host.empty()) {
    return "the runner host " + options_.runner_host + " is not connected; the run was not started";
  }
  return "the local code runner process is not available; the run was not started";
}

std::string RunnerClient::Peer() const {
  return options_.runner_host.empty() ? "the code runner process" : "the runner host " + options_.runner_host;
}

std::string RunnerClient::NotStartedPrefix() const {
  if (!options_.runner_host.empty()) return "the runner host " + options_.runner_host + " is unreachable";
  return "the local code runner process could not be started";
}

Status RunnerClient::Send(const std::shared_ptr<Connection>& conn,
                          const std::shared_ptr<Pending>& p, Json message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (conn_ != conn) return Unavailable(Peer() + (options_.runner_host.empty() ? " exited" : " went away"));
    p->id = next_id_++;
    p->generation = conn->generation;
    pending_[p->id] = p;
  }
  message["id"] = p->id;
  Status st = conn->Write(message);
  if (!st.ok()) Unregister(*p);
  return st;
}

void RunnerClient::Unregister(const Pending& p) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(p.id);
}

bool RunnerClient::CallerUnderSlotLimitLocked(const std::string& caller) const {
  if (caller.empty() || options_.max_concurrent_per_caller == 0) return true;
  auto it = caller_in_flight_.find(caller);
  return it == caller_in_flight_.end() || it->second < options_.max_concurrent_per_caller;
}

void RunnerClient::AdmitQueuedLocked() {
  for (auto it = queue_.begin(); it != queue_.end() && in_flight_ < max_concurrent_;) {
    if (!CallerUnderSlotLimitLocked((*it)->caller)) {
      ++it;  // its caller holds its share; later callers' runs go first
      continue;
    }
    std::shared_ptr<Pending> next = *it;
    it = queue_.erase(it);
    ++in_flight_;
    if (!next->caller.empty()) {
      ++caller_in_flight_[next->caller];
      if (--caller_queued_[next->caller] == 0) caller_queued_.erase(next->caller);
    }
    next->admitted = true;
    next->Signal();
  }
}

void RunnerClient::ReleaseSlot(const std::string& caller) {
  std::lock_guard<std::mutex> lock(mu_);
  --in_flight_;
  if (!caller.empty()) {
    auto it = caller_in_flight_.find(caller);
    if (it != caller_in_flight_.end() && --it->second == 0) caller_in_flight_.erase(it);
  }
  AdmitQueuedLocked();  // the oldest waiter that may run gets the slot
}

RunResult RunnerClient::Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                            CancelToken& cancel, runtimes::BridgeHandler* bridge) {
  const std::string& language = request.language;
  auto report = [&](RunPhase phase) {
    if (progress) progress(phase);
  };
  auto cancelled_result = [&](const RunResult* partial) {
    RunResult r = partial ? *partial : RunResult{};
    r.status = runtimes::RunStatus::kInternalError;
    r.error_code = "cancelled";
    r.message = "the run was cancelled";
    r.language = language;
    return r;
  };

  if (request.code_mode && bridge == nullptr) {
    return InternalErrorResult(language, "invalid_request", "a code-mode run needs a bridge");
  }
  // 1. Admission: a slot, a place in the queue, or "busy".
  auto p = std::make_shared<Pending>();
  p->bridge = request.code_mode ? bridge : nullptr;
  p->caller = request.caller;
  struct BridgeGuard {
    Pending* p;
    ~BridgeGuard() {
      std::unique_ptr<runtimes::BridgeRelay> relay;
      {
        std::lock_guard<std::mutex> lock(p->bridge_mu);
        relay = std::move(p->relay);
        p->bridge = nullptr;
      }
      // The result is in (the program has ended) or the run was given up:
      // what the program sent still reaches its handler, which outlives Run().
      if (relay) relay->Finish();
    }
  } bridge_guard{p.get()};
  bool admitted = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      return InternalErrorResult(language, "runner_unavailable",
                                 "airlock is shutting down; the run was not started");
    }
    EnsureStartedLocked();
    const std::string& caller = p->caller;
    const bool limited = !caller.empty();
    // Queued runs that could take a free slot were admitted when it freed
    // (AdmitQueuedLocked), so a free slot is this run's unless its caller
    // holds its share, or has runs waiting already (they go first).
    const bool caller_waiting = limited && caller_queued_.count(caller) > 0;
    if (in_flight_ < max_concurrent_ && CallerUnderSlotLimitLocked(caller) && !caller_waiting) {
      ++in_flight_;
      if (limited) ++caller_in_flight_[caller];
      p->admitted = admitted = true;
    } else if (limited && options_.max_queue_per_caller > 0 && caller_waiting &&
               caller_queued_[caller] >= options_.max_queue_per_caller) {
      const auto held = caller_in_flight_.find(caller);
      return InternalErrorResult(
          language, "busy",
          "airlock is busy for this caller: the per-caller limit is " +
              std::to_string(options_.max_concurrent_per_caller) + " runs in flight and " +
              std::to_string(options_.max_queue_per_caller) + " queued, and this caller has " +
              std::to_string(held == caller_in_flight_.end() ? 0 : held->second) + " in flight and " +
              std::to_string(caller_queued_[caller]) + " queued; other callers are still served; retry later");
    } else if (queue_.size() < options_.max_queue) {
      queue_.push_back(p);
      if (limited) ++caller_queued_[caller];
    } else {
      return InternalErrorResult(language, "busy",
                                 "airlock is busy: " + std::to_string(in_flight_) +
                                     " runs in flight and " + std::to_string(queue_.size()) +
                                     " queued; retry later");
    }
  }
  if (!admitted) {
    report(RunPhase::kQueued);
    for (;;) {
      p->Wait(cancel.fd(), -1);
      std::lock_guard<std::mutex> lock(mu_);
      if (p->admitted) break;
      if (cancel.cancelled() || stopping_) {
        queue_.erase(std::find(queue_.begin(), queue_.end(), p));
        if (!p->caller.empty() && --caller_queued_[p->caller] == 0) caller_queued_.erase(p->caller);
        if (cancel.cancelled()) return cancelled_result(nullptr);
        return InternalErrorResult(language, "runner_unavailable",
                                   "airlock is shutting down; the run was not started");
      }
    }
  }
  struct SlotGuard {
    RunnerClient* client;
    const std::string& caller;
    ~SlotGuard() { client->ReleaseSlot(caller); }
  } slot{this, p->caller};

  // 2. Hand it to the runner.
  std::shared_ptr<Connection> conn = AwaitRunner(&cancel);
  if (!conn) {
    if (cancel.cancelled()) return cancelled_result(nullptr);
    return InternalErrorResult(language, "runner_unavailable", UnavailableMessage());
  }
  Status sent = Send(conn, p, {{"type", "run"}, {"request", ToJson(request)}});
  if (!sent.ok()) {
    if (sent.code() == StatusCode::kInvalidArgument) {
      return InternalErrorResult(language, "invalid_request",
                                 "the request is too large: " + sent.message());
    }
    return InternalErrorResult(language, "runner_unavailable",
                               "could not hand the run to " + Peer() + " (" +
                                   sent.message() + "); the run was not started");
  }

  // 3. Relay progress until the result, a failure, or cancellation.
  bool cancel_sent = false;
  Clock::time_point grace_deadline;
  std::optional<Json> reply;
  std::optional<std::string> failure;
  for (;;) {
    int timeout_ms = -1;
    if (cancel_sent) {
      timeout_ms = MillisUntil(grace_deadline);
      if (timeout_ms == 0 && Clock::now() >= grace_deadline) break;
    }
    p->Wait(cancel_sent ? -1 : cancel.fd(), timeout_ms);
    std::deque<RunPhase> phases;
    {
      std::lock_guard<std::mutex> lock(mu_);
      phases.swap(p->progress);
      if (p->reply) reply = std::move(p->reply);
      if (p->failure) failure = p->failure;
    }
    for (RunPhase phase : phases) report(phase);
    if (reply || failure) break;
    if (!cancel_sent && cancel.cancelled()) {
      cancel_sent = true;
      grace_deadline = Clock::now() + options_.cancel_grace;
      Status st = conn->Write({{"type", "cancel"}, {"id", p->id}});
      if (!st.ok()) break;  // the runner is gone; nothing left to wait for
    }
  }
  Unregister(*p);
  // The runner sends no "done" frame (runner_loop.h): its result is the end.
  if (reply && !cancel_sent) report(RunPhase::kDone);

  std::optional<RunResult> result;
  if (reply) {
    auto it = reply->find("result");
    StatusOr<RunResult> parsed = it != reply->end()
                                     ? runtimes::RunResultFromJson(*it)
                                     : StatusOr<RunResult>(InvalidArgument("no \"result\" field"));
    if (parsed.ok()) {
      result = std::move(parsed).value();
    } else {
      result = InternalErrorResult(language, "internal",
                                   "the code runner sent an invalid result: " +
                                       parsed.status().message());
    }
  }
  if (cancel_sent) return cancelled_result(result ? &*result : nullptr);
  if (result) return *result;
  return InternalErrorResult(language, "runner_unavailable",
                             failure ? *failure : Peer() + " did not answer");
}

StatusOr<Json> RunnerClient::Query(Json message, std::chrono::milliseconds timeout) {
  std::shared_ptr<Connection> conn = AwaitRunner(nullptr);
  if (!conn) return Unavailable(UnavailableMessage());
  auto p = std::make_shared<Pending>();
  AIRLOCK_RETURN_IF_ERROR(Send(conn, p, std::move(message)));
  const auto deadline = Clock::now() + timeout;
  std::optional<Json> reply;
  std::optional<std::string> failure;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (p->reply) reply = std::move(p->reply);
      failure = p->failure;
      if (reply || failure) break;
    }
    if (Clock::now() >= deadline) break;
    p->Wait(-1, MillisUntil(deadline) + 1);
  }
  Unregister(*p);
  if (reply) return std::move(*reply);
  if (failure) return Unavailable(*failure);
  return DeadlineExceeded("the runner did not answer in time");
}

std::vector<runtimes::LanguageInfo> RunnerClient::Languages() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Clock::now() < languages_expiry_) return languages_cache_;
  }
  StatusOr<Json> reply = Query({{"type", "languages"}}, options_.languages_timeout);
  if (!reply.ok()) return {};
  std::vector<runtimes::LanguageInfo> languages;
  auto list = reply->find("languages");
  if (list == reply->end() || !list->is_array()) return {};
  for (const Json& entry : *list) {
    StatusOr<runtimes::LanguageInfo> info = runtimes::LanguageInfoFromJson(entry);
    if (info.ok()) {
      languages.push_back(std::move(info).value());
    } else {
      Log("ignoring a bad language entry from the runner: " + info.status().message());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  languages_cache_ = languages;
  languages_expiry_ = Clock::now() + options_.languages_ttl;
  return languages;
}

}  // namespace airlock::runner

namespace airlock::runner {

namespace {

// A "session" reply: {"ok": true} or {"ok": false, "code": "NOT_FOUND", "message": "..."}.
Status SessionReplyStatus(const StatusOr<Json>& reply) {
  if (!reply.ok()) return reply.status();
  if (reply->value("ok", false)) return OkStatus();
  return Status(StatusCodeFromName(reply->value("code", std::string("INTERNAL"))),
                reply->value("message", std::string("the runner refused")));
}

}  // namespace

Status RunnerClient::OpenSession(const runtimes::SessionSpec& spec) {
  return SessionReplyStatus(Query({{"type", "session_open"}, {"session", ToJson(spec)}}, options_.session_timeout));
}

Status RunnerClient::CloseSession(const std::string& id) {
  return SessionReplyStatus(Query({{"type", "session_close"}, {"session_id", id}}, options_.session_timeout));
}

Status RunnerClient::PauseSession(const std::string& id) {
  return SessionReplyStatus(Query({{"type", "session_pause"}, {"session_id", id}}, options_.checkpoint_timeout));
}

Status RunnerClient::ResumeSession(const std::string& id) {
  return SessionReplyStatus(Query({{"type", "session_resume"}, {"session_id", id}}, options_.checkpoint_timeout));
}

Status RunnerClient::ForkSession(const std::string& id, const runtimes::SessionSpec& copy) {
  return SessionReplyStatus(
      Query({{"type", "session_fork"}, {"session_id", id}, {"session", ToJson(copy)}}, options_.checkpoint_timeout));
}

void RunnerClient::SayDrained() {
  std::shared_ptr<Connection> conn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kReady && !stopping_) conn = conn_;
  }
  // A runner host that is gone waits for no one.
  if (conn) (void)conn->Write({{"type", "drained"}, {"id", 0}});
}

StatusOr<runtimes::SessionImageChunk> RunnerClient::ExportSession(const std::string& id, uint64_t offset) {
  StatusOr<Json> reply =
      Query({{"type", "session_export"}, {"session_id", id}, {"offset", offset}}, options_.checkpoint_timeout);
  AIRLOCK_RETURN_IF_ERROR(SessionReplyStatus(reply));
  auto chunk = reply->find("chunk");
  runtimes::SessionImageChunk out;
  if (chunk == reply->end() || !chunk->is_object() || !chunk->contains("data") || !(*chunk)["data"].is_string() ||
      !Base64Decode((*chunk)["data"].get<std::string>(), &out.data) || !(*chunk)["size"].is_number_unsigned()) {
    return Internal("the runner answered an export without a well-formed chunk");
  }
  out.size = (*chunk)["size"].get<uint64_t>();
  if (auto spec = chunk->find("session"); spec != chunk->end()) out.spec_json = spec->dump();
  return out;
}

Status RunnerClient::ImportSession(const runtimes::SessionSpec& spec, uint64_t offset, const std::string& data,
                                   bool last) {
  return SessionReplyStatus(Query({{"type", "session_import"},
                                   {"session", ToJson(spec)},
                                   {"offset", offset},
                                   {"data", Base64Encode(data)},
                                   {"last", last}},
                                  options_.checkpoint_timeout));
}

}  // namespace airlock::runner
