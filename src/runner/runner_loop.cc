#include "runner/runner_loop.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/encoding.h"
#include "runner/worker_pool.h"

namespace airlock::runner {
namespace {

using Json = nlohmann::json;
using runtimes::RunResult;

void Log(const std::string& message) {
  std::fprintf(stderr, "airlock-runner[%d]: %s\n", static_cast<int>(getpid()), message.c_str());
}

// One connection's worth of state: the in-flight tasks and the writer lock.
class RunnerLoop {
 public:
  RunnerLoop(int fd, runtimes::CodeExecutor& executor, const RunnerOptions& options)
      : fd_(fd),
        executor_(executor),
        options_(options),
        // Runs are capped at max_concurrent_runs below; the rest is room for
        // the short tasks (languages, session open/close) beside them.
        workers_({.max_workers = options.max_concurrent_runs + kSideTasks}) {}

  int Serve();

 private:
  static constexpr size_t kSideTasks = 16;

  void Send(const Json& message);
  void Dispatch(const Json& message);
  void StartRun(uint64_t id, const Json& message);
  // Starts `body` on a worker; a `run_id` registers it as a run with its
  // cancel token until it returns. False when no worker can take it.
  bool StartTask(std::optional<uint64_t> run_id, std::shared_ptr<CancelToken> cancel,
                 std::function<void()> body);
  void CancelAllAndWait();
  // Starts a short non-run task (languages, session open/close/...).
  void RunSideTask(std::function<void()> body);
  // A session_* frame's operation on the executor (session_open,
  // session_close, session_pause, session_resume, session_fork).
  // A session_* frame; a session_export's chunk goes into `reply`.
  Status SessionOp(const Json& message, Json* reply);

  // Forwards one code-mode run's bridge frames to the server.
  class RelayHandler : public runtimes::BridgeHandler {
   public:
    RelayHandler(RunnerLoop& loop, uint64_t id) : loop_(loop), id_(id) {}
    void OnFrame(std::string frame, ReplyFn reply) override {
      {
        std::lock_guard<std::mutex> lock(loop_.mu_);
        loop_.bridge_replies_[id_] = std::move(reply);
      }
      loop_.Send({{"type", "bridge"}, {"id", id_}, {"frame", std::move(frame)}});
    }
    void OnBridgeError(const std::string& message) override {
      loop_.Send({{"type", "bridge_error"}, {"id", id_}, {"message", message}});
    }
    // Where the channel can carry descriptors (the local server's), the
    // server reads the program's bridge itself: one hop less per frame.
    bool TakeSocket(UniqueFd& host_end) override {
      if (!loop_.options_.pass_bridge_sockets) return false;
      std::lock_guard<std::mutex> lock(loop_.write_mu_);
      Status st = WriteJsonFrameWithFd(loop_.fd_, {{"type", "bridge_socket"}, {"id", id_}}, host_end.get(),
                                       loop_.options_.max_frame_bytes);
      if (!st.ok()) return false;  // relayed, as without (a dead server ends the run anyway)
      host_end.Reset();  // the server's copy is the one that counts
      return true;
    }

   private:
    RunnerLoop& loop_;
    const uint64_t id_;
  };

  const int fd_;
  runtimes::CodeExecutor& executor_;
  const RunnerOptions options_;

  std::mutex write_mu_;  // serialises frames on fd_

  std::mutex mu_;  // guards the fields below
  std::map<uint64_t, std::shared_ptr<CancelToken>> runs_;  // run id -> its cancel token
  std::map<uint64_t, runtimes::BridgeHandler::ReplyFn> bridge_replies_;  // run id -> to its program

  // Last: destroyed first, it waits for every task, which use the above.
  WorkerPool workers_;
};

void RunnerLoop::Send(const Json& message) {
  std::lock_guard<std::mutex> lock(write_mu_);
  Status st = WriteJsonFrame(fd_, message, options_.max_frame_bytes);
  if (st.ok()) return;
  if (st.code() == StatusCode::kInvalidArgument && message.value("type", "") == "result") {
    // The result is too big for one frame: say so instead of dropping it.
    RunResult r = runtimes::InternalErrorResult(
        "", "internal", "the run's result exceeds the channel's frame limit: " + st.message());
    st = WriteJsonFrame(fd_, {{"type", "result"}, {"id", message["id"]}, {"result", ToJson(r)}},
                        options_.max_frame_bytes);
  }
  // A dead server shows up as EOF on the read side; nothing else to do here.
  if (!st.ok() && st.code() != StatusCode::kUnavailable) {
    Log("cannot send a frame: " + st.ToString());
  }
}

bool RunnerLoop::StartTask(std::optional<uint64_t> run_id, std::shared_ptr<CancelToken> cancel,
                           std::function<void()> body) {
  if (run_id) {
    std::lock_guard<std::mutex> lock(mu_);
    runs_[*run_id] = std::move(cancel);
  }
  const bool started = workers_.Submit([this, run_id, body = std::move(body)] {
    body();
    if (run_id) {
      std::lock_guard<std::mutex> lock(mu_);
      runs_.erase(*run_id);
    }
  });
  if (!started && run_id) {
    std::lock_guard<std::mutex> lock(mu_);
    runs_.erase(*run_id);
  }
  return started;
}

void RunnerLoop::StartRun(uint64_t id, const Json& message) {
  auto reject = [&](const std::string& code, const std::string& text) {
    Send({{"type", "result"},
          {"id", id},
          {"result", ToJson(runtimes::InternalErrorResult("", code, text))}});
  };
  auto request_json = message.find("request");
  if (request_json == message.end()) return reject("invalid_request", "run without a request");
  StatusOr<runtimes::RunRequest> request = runtimes::RunRequestFromJson(*request_json);
  if (!request.ok()) return reject("invalid_request", "invalid request: " + request.status().message());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (runs_.count(id)) {
      return reject("invalid_request", "a run with id " + std::to_string(id) + " is already in flight");
    }
    if (runs_.size() >= options_.max_concurrent_runs) {
      return reject("busy", "the code runner already has " + std::to_string(runs_.size()) +
                                " runs in flight; retry later");
    }
  }
  auto cancel = std::make_shared<CancelToken>();
  const bool started = StartTask(id, cancel, [this, id, cancel, req = std::move(request).value()] {
    runtimes::ProgressFn progress = [this, id](runtimes::RunPhase phase) {
      // The result frame right after says "done"; a frame of its own would
      // only wake the server twice more (RunnerClient reports it).
      if (phase == runtimes::RunPhase::kDone) return;
      Send({{"type", "progress"}, {"id", id}, {"phase", runtimes::RunPhaseName(phase)}});
    };
    RunResult result;
    std::unique_ptr<RelayHandler> relay;
    if (req.code_mode) relay = std::make_unique<RelayHandler>(*this, id);
    try {
      result = executor_.Run(req, progress, *cancel, relay.get());
    } catch (const std::exception& e) {
      result = runtimes::InternalErrorResult(req.language, "internal",
                                             std::string("the executor failed: ") + e.what());
    } catch (...) {
      result = runtimes::InternalErrorResult(req.language, "internal", "the executor failed");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      bridge_replies_.erase(id);
    }
    Send({{"type", "result"}, {"id", id}, {"result", ToJson(result)}});
  });
  if (!started) reject("busy", "the code runner has no worker free for this run; retry later");
}

void RunnerLoop::Dispatch(const Json& message) {
  auto type_it = message.find("type");
  auto id_it = message.find("id");
  if (type_it == message.end() || !type_it->is_string()) {
    Log("ignoring a frame without a string \"type\"");
    return;
  }
  const std::string type = type_it->get<std::string>();
  if (id_it == message.end() || !id_it->is_number_unsigned()) {
    Log("ignoring a \"" + type + "\" frame without a non-negative integer \"id\"");
    return;
  }
  const uint64_t id = id_it->get<uint64_t>();
  if (type == "run") {
    StartRun(id, message);
  } else if (type == "cancel") {
    std::lock_guard<std::mutex> lock(mu_);
    auto run = runs_.find(id);
    if (run != runs_.end()) run->second->Cancel();
  } else if (type == "languages") {
    RunSideTask([this, id] {
      Json list = Json::array();
      try {
        for (const runtimes::LanguageInfo& l : executor_.Languages()) list.push_back(ToJson(l));
      } catch (...) {
        Log("the executor failed to list languages");
      }
      Send({{"type", "languages"}, {"id", id}, {"languages", std::move(list)}});
    });
  } else if (type == "session_open" || type == "session_close" || type == "session_pause" ||
             type == "session_resume" || type == "session_fork" || type == "session_export" ||
             type == "session_import") {
    RunSideTask([this, id, message] {
      Json reply = {{"type", "session"}, {"id", id}};
      Status st = SessionOp(message, &reply);
      reply["ok"] = st.ok();
      if (!st.ok()) {
        reply.erase("chunk");
        reply["code"] = StatusCodeName(st.code());
        reply["message"] = st.message();
      }
      Send(reply);
    });
  } else if (type == "bridge_reply") {
    auto frame = message.find("frame");
    if (frame == message.end() || !frame->is_string()) {
      Log("ignoring a bridge_reply without a string \"frame\"");
      return;
    }
    runtimes::BridgeHandler::ReplyFn reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = bridge_replies_.find(id);
      if (it == bridge_replies_.end()) return;  // the run is over
      reply = it->second;
    }
    reply(frame->get<std::string>());  // queues; never blocks on the program
  } else if (type == "health") {
    Json health = Json::object();
    try {
      health = executor_.Health();
    } catch (...) {
      Log("the executor failed to report its health");
    }
    Send({{"type", "health"}, {"id", id}, {"health", std::move(health)}});
  } else if (type == "ping") {
    Send({{"type", "pong"}, {"id", id}});
  } else {
    Log("ignoring a frame of unknown type \"" + type + "\"");
  }
}

Status RunnerLoop::SessionOp(const Json& message, Json* reply) {
  const std::string type = message.value("type", std::string());
  const auto spec = [&]() -> StatusOr<runtimes::SessionSpec> {
    return runtimes::SessionSpecFromJson(message.contains("session") ? message["session"] : Json());
  };
  if (type == "session_open") {
    AIRLOCK_ASSIGN_OR_RETURN(runtimes::SessionSpec s, spec());
    return executor_.OpenSession(s);
  }
  if (type == "session_import") {
    AIRLOCK_ASSIGN_OR_RETURN(runtimes::SessionSpec s, spec());
    auto offset = message.find("offset");
    auto data = message.find("data");
    auto last = message.find("last");
    std::string bytes;
    if (offset == message.end() || !offset->is_number_unsigned() || data == message.end() || !data->is_string() ||
        last == message.end() || !last->is_boolean() || !Base64Decode(data->get<std::string>(), &bytes)) {
      return InvalidArgument("session_import needs an offset, base64 data and last");
    }
    return executor_.ImportSession(s, offset->get<uint64_t>(), bytes, last->get<bool>());
  }
  auto sid = message.find("session_id");
  if (sid == message.end() || !sid->is_string()) return InvalidArgument("session_id must be a string");
  const std::string session_id = sid->get<std::string>();
  if (type == "session_close") return executor_.CloseSession(session_id);
  if (type == "session_pause") return executor_.PauseSession(session_id);
  if (type == "session_resume") return executor_.ResumeSession(session_id);
  if (type == "session_export") {
    auto offset = message.find("offset");
    if (offset == message.end() || !offset->is_number_unsigned()) {
      return InvalidArgument("offset must be a non-negative integer");
    }
    AIRLOCK_ASSIGN_OR_RETURN(runtimes::SessionImageChunk chunk,
                             executor_.ExportSession(session_id, offset->get<uint64_t>()));
    Json out = {{"data", Base64Encode(chunk.data)}, {"size", chunk.size}};
    if (!chunk.spec_json.empty()) {
      Json spec = Json::parse(chunk.spec_json, nullptr, /*allow_exceptions=*/false);
      if (spec.is_discarded()) return Internal("the session's spec could not be read back");
      out["session"] = std::move(spec);
    }
    (*reply)["chunk"] = std::move(out);
    return OkStatus();
  }
  AIRLOCK_ASSIGN_OR_RETURN(runtimes::SessionSpec copy, spec());  // session_fork
  return executor_.ForkSession(session_id, copy);
}

void RunnerLoop::RunSideTask(std::function<void()> body) {
  // Side tasks are few and short; should every worker be taken (a confused
  // peer), answer on the reading thread rather than drop the request.
  std::function<void()> copy = body;
  if (!StartTask(std::nullopt, nullptr, std::move(body))) copy();
}

void RunnerLoop::CancelAllAndWait() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, cancel] : runs_) cancel->Cancel();
  }
  // Runs notice the token and return; their epilogues take mu_.
  workers_.WaitIdle();
}

int RunnerLoop::Serve() {
  Send({{"type", "hello"}, {"pid", static_cast<int64_t>(getpid())}, {"version", options_.version}});
  int exit_code = 0;
  for (;;) {
    StatusOr<Json> message = ReadJsonFrame(fd_, options_.max_frame_bytes);
    if (!message.ok()) {
      const Status& st = message.status();
      if (st.code() == StatusCode::kUnavailable) break;  // the server is gone
      if (st.code() == StatusCode::kInvalidArgument) {  // one bad frame; stream intact
        Log(st.message());
        continue;
      }
      Log("the channel is unusable: " + st.ToString());
      exit_code = 1;
      break;
    }
    try {
      Dispatch(*message);
    } catch (const std::exception& e) {
      Log(std::string("error handling a frame: ") + e.what());
    }
  }
  CancelAllAndWait();
  return exit_code;
}

}  // namespace

int RunnerMain(int channel_fd, runtimes::CodeExecutor& executor, const RunnerOptions& options) {
  // The channel was inherited across exec; keep it out of every jail.
  if (fcntl(channel_fd, F_SETFD, FD_CLOEXEC) != 0) {
    Log("bad channel fd " + std::to_string(channel_fd) + ": " + std::strerror(errno));
    return 1;
  }
  try {
    RunnerLoop loop(channel_fd, executor, options);
    return loop.Serve();
  } catch (const std::exception& e) {
    Log(std::string("fatal: ") + e.what());
    return 1;
  }
}

}  // namespace airlock::runner
