#include "runtimes/sandbox_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/random.h"
#include "base/unique_fd.h"
#include "runtimes/bridge_relay.h"
#include "runtimes/result_mapping.h"
#include "runtimes/session_harness.h"

namespace airlock::runtimes {

namespace {

// A snapshot turn's own limits: time to write the image, room for it.
constexpr uint64_t kSnapshotWallMs = 60'000;
constexpr uint64_t kCommandOutputBytes = 64 << 10;

// The session argv with "--restore" before its "--" (LanguageSpec::session_checkpoints).
std::vector<std::string> RestoreArgv(std::vector<std::string> argv) {
  auto dash = std::find(argv.begin(), argv.end(), "--");
  argv.insert(dash, "--restore");
  return argv;
}

// A checkpoint turn (SnapshotTurnMessage or RestoreTurnMessage's
// `message`): the image's descriptor `fd` lent with it, its own limits.
jail::TurnRequest CommandTurn(std::string message, const std::string& nonce, int fd) {
  jail::TurnRequest turn;
  turn.message = std::move(message);
  turn.end_marker = TurnEndMarker(nonce);
  turn.pass_fd = fd;
  turn.limits.wall_ms = kSnapshotWallMs;
  turn.limits.max_stdout_bytes = kCommandOutputBytes;
  turn.limits.max_stderr_bytes = kCommandOutputBytes;
  turn.limits.kill_on_output_limit = true;
  return turn;
}

// The error text of a command turn that failed: airlock-js's stderr line.
std::string CommandError(const jail::TurnResult& t, const std::string& marker) {
  std::string err = t.exec.stderr_data;
  if (const size_t m = err.find(marker); m != std::string::npos) err.resize(m);
  if (err.rfind("airlock-js: ", 0) == 0) err.erase(0, 12);
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  return err.empty() ? "no reason given" : err;
}

}  // namespace

SandboxSession::SandboxSession(const LanguageSpec& spec, uint64_t memory_mb, jail::JailHost& host,
                               const jail::JailConfig& config, const jail::ExecRequest& start, std::string image_dir)
    : spec_(spec), memory_mb_(memory_mb), host_(host), config_(config), start_(start), image_dir_(std::move(image_dir)) {}

SandboxSession::~SandboxSession() {
  if (image_path_.empty() || keep_image_) return;
  ::unlink(image_path_.c_str());
  ::unlink(ManifestPathFor(image_path_).c_str());
}

std::unique_ptr<SandboxSession> SandboxSession::Adopt(jail::JailHost& host, const LanguageSpec& spec,
                                                      const jail::JailConfig& config, const jail::ExecRequest& start,
                                                      std::string image_dir, std::string image_path) {
  std::unique_ptr<SandboxSession> s(
      new SandboxSession(spec, config.limits.memory_bytes >> 20, host, config, start, std::move(image_dir)));
  s->image_path_ = std::move(image_path);
  s->paused_ = true;
  return s;
}

void SandboxSession::set_manifest(std::string session_json) {
  std::lock_guard<std::mutex> lock(manifest_mu_);
  manifest_ = std::move(session_json);
}

std::string SandboxSession::manifest() {
  std::lock_guard<std::mutex> lock(manifest_mu_);
  return manifest_;
}

void SandboxSession::KeepImage() {
  std::lock_guard<std::mutex> lock(mu_);
  keep_image_ = true;
}

std::string SandboxSession::ManifestPathFor(const std::string& image_path) {
  const std::string ext = ".image";
  if (image_path.size() > ext.size() && image_path.compare(image_path.size() - ext.size(), ext.size(), ext) == 0) {
    return image_path.substr(0, image_path.size() - ext.size()) + ".json";
  }
  return image_path + ".json";
}

StatusOr<std::string> SandboxSession::NewImagePath(const std::string& dir) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string name, RandomHex(16));
  return dir + "/" + name + ".image";
}

std::string SandboxSession::image_path() {
  std::lock_guard<std::mutex> lock(mu_);
  return paused_ ? image_path_ : std::string();
}

bool SandboxSession::WriteManifestLocked(const std::string& path) {
  const std::string spec_json = manifest();
  if (spec_json.empty()) return true;
  const std::string name = path.substr(path.rfind('/') + 1);
  const std::string manifest = "{\"session\": " + spec_json + ", \"image\": \"" + name +
                               "\", \"paused_at\": " + std::to_string(::time(nullptr)) + "}\n";
  const std::string mpath = ManifestPathFor(path);
  UniqueFd m(::open(mpath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!m || ::write(m.get(), manifest.data(), manifest.size()) != static_cast<ssize_t>(manifest.size())) {
    if (m) ::unlink(mpath.c_str());
    return false;
  }
  return true;
}

Status SandboxSession::WriteManifest() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!paused_ || image_path_.empty()) return FailedPrecondition("the session is not paused");
  if (!WriteManifestLocked(image_path_)) {
    return FailedPrecondition("cannot write the manifest of " + image_path_ + ": " + std::strerror(errno));
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<SandboxSession>> SandboxSession::Open(jail::JailHost& host, const LanguageSpec& spec,
                                                               const jail::JailConfig& config,
                                                               const jail::ExecRequest& start, std::string image_dir) {
  if (spec.session_argv.empty()) return NotFound(spec.name + " has no sessions");
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<jail::Jail> j, jail::Jail::Create(host, config));
  jail::ExecRequest request = start;
  if (request.argv.empty()) request.argv = spec.session_argv;
  AIRLOCK_RETURN_IF_ERROR(j->StartInteractive(request));
  std::unique_ptr<SandboxSession> s(
      new SandboxSession(spec, config.limits.memory_bytes >> 20, host, config, request, std::move(image_dir)));
  s->jail_ = std::move(j);
  return s;
}

jail::TurnResult SandboxSession::TurnLocked(const jail::TurnRequest& turn, CancelToken& cancel) {
  {
    std::lock_guard<std::mutex> running(running_mu_);
    running_ = &cancel;
  }
  jail::TurnResult t = jail_->Turn(turn, &cancel);
  std::lock_guard<std::mutex> running(running_mu_);
  running_ = nullptr;
  return t;
}

Status SandboxSession::LoseStatus(const std::string& reason) {
  RunResult ignored;
  Lose(ignored, reason);
  return FailedPrecondition("E_SESSION_LOST: the session was lost: " + lost_reason_);
}

Status SandboxSession::SnapshotLocked(const std::string& path) {
  // The engine writes the image straight into this file (one descriptor
  // lent for the turn), bounded by its RLIMIT_FSIZE: nothing of it goes
  // through the jail's /work, its init or this process's memory.
  UniqueFd file(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!file) return FailedPrecondition("cannot create the session's image: " + std::string(std::strerror(errno)));
  auto discard = [&path](Status st) {
    ::unlink(path.c_str());
    return st;
  };
  AIRLOCK_ASSIGN_OR_RETURN(std::string nonce, RandomHex(16));
  const jail::TurnRequest turn = CommandTurn(SnapshotTurnMessage(nonce), nonce, file.get());
  CancelToken cancel;
  jail::TurnResult t = TurnLocked(turn, cancel);
  std::optional<SessionReply> reply;
  if (t.program_alive && t.replied) reply = ParseSessionReply(t.reply, nonce);
  if (!reply) {
    return discard(
        LoseStatus(t.exec.error.empty() ? "the interpreter did not answer the snapshot turn" : t.exec.error));
  }
  (void)jail_->SetFrozen(true);
  if (reply->kind != SessionReply::Kind::kOk) {
    return discard(FailedPrecondition("the session could not be saved: " + CommandError(t, turn.end_marker)));
  }
  struct stat st{};
  if (::fstat(file.get(), &st) != 0 || st.st_size == 0) {
    return discard(FailedPrecondition("the interpreter made no image"));
  }
  return OkStatus();
}

Status SandboxSession::RestoreLocked(const std::string& path) {
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!file) return FailedPrecondition("the session's image is gone: " + std::string(std::strerror(errno)));
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<jail::Jail> j, jail::Jail::Create(host_, config_));
  jail::ExecRequest request = start_;
  request.argv = RestoreArgv(start_.argv);
  AIRLOCK_RETURN_IF_ERROR(j->StartInteractive(request));
  AIRLOCK_ASSIGN_OR_RETURN(std::string nonce, RandomHex(16));
  // The image read-only, for this turn.
  const jail::TurnRequest turn = CommandTurn(RestoreTurnMessage(nonce), nonce, file.get());
  CancelToken cancel;
  jail::TurnResult t = j->Turn(turn, &cancel);
  std::optional<SessionReply> reply;
  if (t.program_alive && t.replied) reply = ParseSessionReply(t.reply, nonce);
  if (!reply || reply->kind != SessionReply::Kind::kOk) {
    j->Kill();
    return FailedPrecondition("the session could not be restored: " +
                              (reply ? CommandError(t, turn.end_marker)
                                     : (t.exec.error.empty() ? "the interpreter did not answer" : t.exec.error)));
  }
  (void)j->SetFrozen(true);
  jail_ = std::move(j);
  return OkStatus();
}

Status SandboxSession::ResumeLocked() {
  if (!paused_) return OkStatus();
  const std::string path = std::move(image_path_);
  image_path_.clear();
  paused_ = false;
  Status st = RestoreLocked(path);
  ::unlink(path.c_str());
  ::unlink(ManifestPathFor(path).c_str());
  if (!st.ok()) return LoseStatus(st.message());
  return OkStatus();
}

Status SandboxSession::Refusal(bool checkpoint, const std::unique_lock<std::mutex>& lock) const {
  if (checkpoint && !pausable()) {
    return FailedPrecondition("E_SESSION_NOT_PAUSABLE: " + spec_.name + " sessions in the " + spec_.isolation +
                              " tier cannot be paused or forked (only the WASM tier's Python can)");
  }
  if (!lock.owns_lock()) return FailedPrecondition("E_SESSION_BUSY: a call of this session is running");
  if (!lost_reason_.empty()) return FailedPrecondition("E_SESSION_LOST: the session was lost: " + lost_reason_);
  return OkStatus();
}

Status SandboxSession::Pause() {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  AIRLOCK_RETURN_IF_ERROR(Refusal(/*checkpoint=*/true, lock));
  if (paused_) return OkStatus();
  AIRLOCK_ASSIGN_OR_RETURN(std::string path, NewImagePath(image_dir_));
  AIRLOCK_RETURN_IF_ERROR(SnapshotLocked(path));
  // Beside the image, for a runner that starts over this directory; the
  // session is paused whether or not it could be written.
  (void)WriteManifestLocked(path);
  image_path_ = path;
  paused_ = true;
  // Nothing of the jail is kept: no process, memory, cgroup or mount.
  jail_.reset();
  return OkStatus();
}

Status SandboxSession::Resume() {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  AIRLOCK_RETURN_IF_ERROR(Refusal(/*checkpoint=*/false, lock));
  return ResumeLocked();
}

StatusOr<std::unique_ptr<SandboxSession>> SandboxSession::Fork() {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  AIRLOCK_RETURN_IF_ERROR(Refusal(/*checkpoint=*/true, lock));
  // A paused source's image serves as it is; a live one is saved to a
  // file of the fork's own, removed once the copy runs.
  std::string path = image_path_;
  std::string scratch;
  if (!paused_) {
    AIRLOCK_ASSIGN_OR_RETURN(scratch, NewImagePath(image_dir_));
    AIRLOCK_RETURN_IF_ERROR(SnapshotLocked(scratch));
    path = scratch;
  }
  std::unique_ptr<SandboxSession> copy(new SandboxSession(spec_, memory_mb_, host_, config_, start_, image_dir_));
  Status st;
  {
    std::lock_guard<std::mutex> copy_lock(copy->mu_);
    st = copy->RestoreLocked(path);
  }
  if (!scratch.empty()) ::unlink(scratch.c_str());
  if (!st.ok()) return st;
  return copy;
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
  if (paused_ && lost_reason_.empty()) {
    // A paused session comes back first, transparently; failing that it is lost.
    (void)ResumeLocked();
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
  jail::TurnResult t = TurnLocked(turn, cancel);
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
