#include "runtimes/sandbox_session.h"

#include "base/random.h"
#include "runtimes/bridge_relay.h"
#include "runtimes/result_mapping.h"
#include "runtimes/session_harness.h"

namespace airlock::runtimes {

StatusOr<std::unique_ptr<SandboxSession>> SandboxSession::Open(jail::JailHost& host, const LanguageSpec& spec,
                                                               const jail::JailConfig& config,
                                                               const jail::ExecRequest& start) {
  if (spec.session_argv.empty()) return NotFound(spec.name + " has no sessions");
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<jail::Jail> j, jail::Jail::Create(host, config));
  jail::ExecRequest request = start;
  if (request.argv.empty()) request.argv = spec.session_argv;
  AIRLOCK_RETURN_IF_ERROR(j->StartInteractive(request));
  std::unique_ptr<SandboxSession> s(new SandboxSession(spec, config.limits.memory_bytes >> 20));
  s->jail_ = std::move(j);
  return s;
}

std::unique_ptr<jail::Jail> SandboxSession::TakeJail() {
  {
    std::lock_guard<std::mutex> running(running_mu_);
    if (running_ != nullptr) running_->Cancel();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (lost_reason_.empty()) lost_reason_ = "the session was closed";
  return std::move(jail_);
}

void SandboxSession::Lose(RunResult& result, const std::string& reason) {
  lost_reason_ = reason.empty() ? "the interpreter stopped" : reason;
  if (jail_) jail_->Kill();
  // The status stays what happened to the cell (an interpreter that exited
  // 0 did what the cell asked: ok); error_code says the session is gone.
  result.error_code = "E_SESSION_LOST";
  result.message = "the session was lost: " + lost_reason_ + "; its state is gone, open a new session";
}

RunResult SandboxSession::Call(const RunRequest& request, const CellLimits& limits, CancelToken& cancel,
                               BridgeHandler* bridge) {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) {
    return InternalErrorResult(spec_.name, "E_SESSION_BUSY",
                               "another call of this session is still running; wait for it to finish");
  }
  if (!lost_reason_.empty() || !jail_) {
    return InternalErrorResult(spec_.name, "E_SESSION_LOST",
                               "the session was lost: " + lost_reason_ + "; its state is gone, open a new session");
  }
  StatusOr<std::string> nonce = RandomHex(16);
  if (!nonce.ok()) return InternalErrorResult(spec_.name, "internal", nonce.status().message());

  jail::TurnRequest turn;
  turn.message = SessionTurnMessage(*nonce, request.code, request.stdin_data);
  turn.end_marker = TurnEndMarker(*nonce);
  for (const InputFile& f : request.files) turn.files.push_back({f.name, f.content});
  turn.output_globs = request.output_globs;
  turn.max_output_files = limits.max_output_files;
  turn.max_output_file_bytes = limits.max_output_file_bytes;
  turn.max_output_files_total_bytes = limits.max_output_files_total_bytes;
  turn.limits.wall_ms = limits.timeout_ms;
  turn.limits.max_stdout_bytes = limits.max_output_bytes;
  turn.limits.max_stderr_bytes = limits.max_output_bytes;
  turn.limits.kill_on_output_limit = limits.kill_on_output_limit;
  // This cell's bridge: its program end goes with the turn's message; the
  // relay is finished (every frame the cell sent handed over) before the
  // result is built, and nothing of it is open once Call returns.
  std::unique_ptr<BridgeRelay> relay;
  if (bridge != nullptr) {
    StatusOr<std::unique_ptr<BridgeRelay>> started = BridgeRelay::Start(*bridge);
    if (!started.ok()) {
      return InternalErrorResult(spec_.name, "jail_setup_failed",
                                 "could not open the bridge: " + started.status().message());
    }
    relay = std::move(started).value();
    turn.pass_fd = relay->jail_end();
  }
  {
    std::lock_guard<std::mutex> running(running_mu_);
    running_ = &cancel;
  }
  jail::TurnResult t = jail_->Turn(turn, &cancel);
  {
    std::lock_guard<std::mutex> running(running_mu_);
    running_ = nullptr;
  }
  if (relay) relay->Finish();

  using Outcome = jail::ExecResult::Outcome;
  if (t.exec.outcome == Outcome::kExecFailed && t.program_alive) {
    // Nothing ran (the files could not be written); the session goes on.
    return InternalErrorResult(spec_.name, "invalid_request", "the cell did not run: " + t.exec.error);
  }
  jail::ExecResult mapped = t.exec;
  std::optional<SessionReply> reply;
  if (t.program_alive && t.replied) reply = ParseSessionReply(t.reply, *nonce);
  if (reply) {
    // The interpreter answered: the cell's own status, as a script's exit.
    mapped.outcome = Outcome::kExited;
    mapped.exit_code = reply->kind == SessionReply::Kind::kOk ? 0 : reply->status;
    mapped.signal = 0;
  } else if (mapped.outcome == Outcome::kJailError && mapped.error.empty()) {
    mapped.error = "the jail failed";
  }
  RunResult result = MapExecResult(spec_.name, mapped, limits.timeout_ms, memory_mb_, spec_.max_pids);
  result.isolation = spec_.isolation;
  if (reply) {
    // Idle until the next call: nothing in the session computes meanwhile
    // (a thread the cell started, a busy loop in the background). Where
    // the host has no freezer the session still works, unfrozen.
    (void)jail_->SetFrozen(true);
    if (result.status == RunStatus::kExitNonzero) {
      result.message = reply->kind == SessionReply::Kind::kExit
                           ? "the cell exited with code " + std::to_string(reply->status) + "; the session goes on"
                           : "the cell failed (exit code " + std::to_string(reply->status) +
                                 "); the session goes on";
    }
    return result;
  }
  // No answer: the interpreter is gone, or the jail was stopped.
  std::string reason;
  switch (t.exec.outcome) {
    case Outcome::kTimedOut: reason = "the call exceeded its time limit of " + std::to_string(limits.timeout_ms) + " ms"; break;
    case Outcome::kOutputLimit: reason = "the call's output exceeded the limit (" + t.exec.error + ")"; break;
    case Outcome::kCancelled: reason = "the call was cancelled"; break;
    case Outcome::kJailError: reason = t.exec.error; break;
    case Outcome::kExited:
    case Outcome::kSignaled:
      if (t.program_alive) {
        reason = "the interpreter broke the session protocol";
      } else if (t.exec.oom_killed) {
        reason = "the session ran out of memory (limit " + std::to_string(memory_mb_) + " MiB)";
      } else if (t.exec.signal != 0) {
        reason = "the interpreter was killed by " + SignalName(t.exec.signal);
      } else {
        reason = "the interpreter exited with code " + std::to_string(t.exec.exit_code);
      }
      break;
    case Outcome::kExecFailed: reason = t.exec.error; break;
  }
  if (result.status == RunStatus::kInternalError && result.error_code.empty()) result.error_code = "E_SESSION_LOST";
  Lose(result, reason);
  return result;
}

}  // namespace airlock::runtimes
