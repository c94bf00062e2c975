#include "sessions/session_registry.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <optional>

#include "base/random.h"
#include "base/time_format.h"
#include "sessions/memory_session_book.h"

namespace airlock::sessions {

using nlohmann::json;


json ToJson(const SessionInfo& s, const config::SessionsConfig& config) {
  return {{"session_id", s.id},
          {"language", s.language},
          {"isolation", s.isolation},
          {"memory_mb", s.memory_mb},
          {"idle_timeout_s", s.idle_timeout_s},
          {"max_lifetime_s", config.max_lifetime_s},
          {"created_at", IsoUtc(s.created_at_ms, true)},
          {"last_used_at", IsoUtc(s.last_used_ms, true)},
          {"expires_at", IsoUtc(s.expires_at_ms, true)},
          {"calls", s.calls},
          {"mode", s.mode.empty() ? "interpreter" : s.mode}};
}

namespace {

constexpr const char* kNamedCodes[] = {"E_SESSION_BUSY", "E_SESSION_LOST", "E_SESSION_NOT_PAUSABLE"};

// The code `message` starts with ("E_SESSION_LOST: ..."), or "".
std::string LeadingCode(const std::string& message) {
  for (const char* code : kNamedCodes) {
    const std::string prefix = std::string(code) + ":";
    if (message.rfind(prefix, 0) == 0) return code;
  }
  return "";
}

// A new book entry like `like` (owner, endpoint, language, isolation,
// mode, memory, idle timeout): a fresh id, its clocks starting now.
StatusOr<SessionInfo> NewEntry(const SessionInfo& like, uint64_t max_lifetime_s) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string hex, RandomHex(16));
  SessionInfo s;
  s.id = "s_" + hex;
  s.owner = like.owner;
  s.endpoint = like.endpoint;
  s.language = like.language;
  s.isolation = like.isolation;
  s.mode = like.mode;
  s.memory_mb = like.memory_mb;
  s.idle_timeout_s = like.idle_timeout_s;
  s.created_at_ms = audit::NowMs();
  s.last_used_ms = s.created_at_ms;
  s.ends_at_ms = s.created_at_ms + static_cast<int64_t>(max_lifetime_s) * 1000;
  s.expires_at_ms = std::min(s.last_used_ms + static_cast<int64_t>(s.idle_timeout_s) * 1000, s.ends_at_ms);
  return s;
}

}  // namespace

std::string SessionErrorCode(const Status& st, const std::string& fallback) {
  if (std::string code = LeadingCode(st.message()); !code.empty()) return code;
  switch (st.code()) {
    case StatusCode::kNotFound:
      return "E_SESSION_NOT_FOUND";
    case StatusCode::kResourceExhausted:
      return "E_SESSION_LIMIT";
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return "runner_unavailable";
    default:
      return fallback;
  }
}

std::string SessionErrorMessage(const Status& st) {
  const std::string code = LeadingCode(st.message());
  if (code.empty()) return st.message();
  size_t start = code.size() + 1;
  while (start < st.message().size() && st.message()[start] == ' ') ++start;
  return st.message().substr(start);
}

Status SessionRegistry::NoSuchSession(const std::string& id) {
  return NotFound("no open session \"" + id.substr(0, 64) +
                  "\": it does not exist, was closed or expired; open one with open_session");
}

SessionRegistry::SessionRegistry(runtimes::CodeExecutor& executor, const config::SessionsConfig& config,
                                 uint64_t max_total, audit::AuditLog* audit, std::shared_ptr<SessionBook> book)
    : executor_(executor),
      config_(config),
      max_total_(max_total),
      audit_(audit),
      book_(book ? std::move(book) : std::make_shared<MemorySessionBook>()) {
  executor_.SetSessionMovedHandler([this](const std::string& id, const std::string& from, const std::string& to) {
    // The executor moved it off a draining runner host: every gateway of
    // the book follows (its next call routes by the row, AdoptSession).
    if (std::optional<SessionInfo> s = book_->Rehome(id, from, to)) {
      Audit("session_move", *s, "", {{"from", from}});
    }
  });
  reaper_ = std::thread([this] { Reaper(); });
}

SessionRegistry::~SessionRegistry() {
  executor_.SetSessionMovedHandler(nullptr);  // returns once a move being recorded is done
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  // A shared book returns none: other gateways serve its sessions, and
  // their reapers close them.
  for (const SessionInfo& s : book_->TakeAll()) {
    (void)executor_.AdoptSession(s.id, s.runner_host);
    (void)executor_.CloseSession(s.id);
    Audit("session_close", s, "server shutdown");
  }
}

void SessionRegistry::Audit(const std::string& kind, const SessionInfo& s, const std::string& reason,
                            const json& extra) {
  if (audit_ == nullptr || !audit_->enabled()) return;
  json detail = {{"language", s.language}, {"isolation", s.isolation}, {"endpoint", s.endpoint},
                 {"memory_mb", s.memory_mb}, {"calls", s.calls}};
  detail.update(extra);
  if (!s.runner_host.empty()) detail["runner_host"] = s.runner_host;
  if (!s.mode.empty()) detail["mode"] = s.mode;
  if (!reason.empty()) detail["reason"] = reason;
  if (Status st = audit_->Event({.kind = kind, .actor = s.owner, .target = s.id, .detail = detail}); !st.ok()) {
    std::cerr << "airlock: audit of " << kind << " " << s.id << " failed: " << st.message() << "\n";
  }
}

StatusOr<SessionInfo> SessionRegistry::Open(const std::string& owner, const OpenRequest& request) {
  const uint64_t idle = request.idle_timeout_s ? request.idle_timeout_s : config_.idle_timeout_s;
  if (idle > config_.max_idle_timeout_s) {
    return InvalidArgument("timeout_s " + std::to_string(idle) + " exceeds the maximum of " +
                           std::to_string(config_.max_idle_timeout_s));
  }
  if (Stopping()) return Unavailable("airlock is shutting down");
  SessionInfo like;
  like.owner = owner;
  like.endpoint = request.endpoint;
  like.language = request.language;
  like.isolation = request.isolation;
  like.mode = request.mode;
  like.memory_mb = request.memory_mb;
  like.idle_timeout_s = idle;
  AIRLOCK_ASSIGN_OR_RETURN(SessionInfo s, NewEntry(like, config_.max_lifetime_s));
  AIRLOCK_ASSIGN_OR_RETURN(SessionInfo opened,
                           Establish(s, request.packages, [this](const runtimes::SessionSpec& spec) {
                             return executor_.OpenSession(spec);
                           }));
  Audit("session_open", opened, "");
  return opened;
}

void SessionRegistry::NoteLost(const std::string& id, const std::string& reason) {
  if (std::optional<SessionInfo> s = book_->NoteLost(id, reason)) Audit("session_lost", *s, reason);
}

StatusOr<SessionInfo> SessionRegistry::BeginCall(const std::string& owner, const std::string& id) {
  StatusOr<SessionInfo> s = book_->BeginCall(owner, id, audit::NowMs());
  if (!s.ok()) {
    if (s.status().code() == StatusCode::kNotFound) return NoSuchSession(id);
    return s.status();
  }
  if (s->lost_reason.empty()) {
    // Perhaps opened through another gateway: route its cell to its host.
    if (Status st = executor_.AdoptSession(id, s->runner_host); !st.ok()) {
      s->lost_reason = "the session was lost: the code runner stopped (" + st.message() +
                       ") and its state is gone; open a new session";
      NoteLost(id, s->lost_reason);
    }
  }
  return s;
}

void SessionRegistry::NoteResult(const std::string& id, runtimes::RunResult& result) {
  if (result.error_code == "E_SESSION_NOT_FOUND") {
    // The executor no longer has it: its runner restarted.
    result.error_code = "E_SESSION_LOST";
    result.message =
        "the session was lost: the code runner restarted and its state is gone; open a new session";
  } else if (result.error_code == "runner_unavailable") {
    // The runner that held it stopped (mid-call, or before): it is gone.
    result.error_code = "E_SESSION_LOST";
    result.message = "the session was lost: the code runner stopped (" + result.message +
                     ") and its state is gone; open a new session";
  }
  if (result.error_code == "E_SESSION_LOST") NoteLost(id, result.message);
}

void SessionRegistry::EndCall(const std::string& id, runtimes::RunResult* result) {
  if (result != nullptr) NoteResult(id, *result);
  book_->EndCall(id, audit::NowMs());  // the idle clock starts when the call ends
}

Status SessionRegistry::Close(const std::string& owner, const std::string& id) {
  StatusOr<SessionInfo> s = book_->Remove(owner, id, audit::NowMs());
  if (!s.ok()) {
    if (s.status().code() == StatusCode::kNotFound) return NoSuchSession(id);
    return s.status();
  }
  // Not adopted: its runner host is gone, and the jail with it.
  const bool reachable = executor_.AdoptSession(id, s->runner_host).ok();
  Status st = reachable ? executor_.CloseSession(id) : OkStatus();
  Audit("session_close", *s, "");
  // NotFound: the runner restarted and the jail is gone already.
  return st.code() == StatusCode::kNotFound ? OkStatus() : st;
}

bool SessionRegistry::Stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

StatusOr<SessionInfo> SessionRegistry::CheckpointTarget(const std::string& owner, const std::string& id) {
  if (Stopping()) return Unavailable("airlock is shutting down");
  // Read, not BeginCall: a checkpoint is not a call and moves no deadline.
  std::optional<SessionInfo> found;
  for (SessionInfo& s : book_->List(owner, audit::NowMs())) {
    if (s.id == id) found = std::move(s);
  }
  if (!found) return NoSuchSession(id);
  if (!found->lost_reason.empty()) return FailedPrecondition("E_SESSION_LOST: " + found->lost_reason);
  if (found->calls_in_flight > 0) {
    return FailedPrecondition("E_SESSION_BUSY: a call of this session is running; wait for it to finish");
  }
  if (Status st = executor_.AdoptSession(id, found->runner_host); !st.ok()) {
    const std::string reason = "the session was lost: the code runner stopped (" + st.message() +
                               ") and its state is gone; open a new session";
    NoteLost(id, reason);
    return FailedPrecondition("E_SESSION_LOST: " + reason);
  }
  return *found;
}

Status SessionRegistry::CheckpointError(const std::string& id, const Status& st) {
  if (st.code() == StatusCode::kNotFound) {
    // The book has it, its runner does not: the runner restarted.
    const std::string reason = "the session was lost: the code runner restarted and its state is gone; open a new session";
    NoteLost(id, reason);
    return FailedPrecondition("E_SESSION_LOST: " + reason);
  }
  if (SessionErrorCode(st, "") == "E_SESSION_LOST") NoteLost(id, SessionErrorMessage(st));
  return st;
}

Status SessionRegistry::Pause(const std::string& owner, const std::string& id) {
  AIRLOCK_ASSIGN_OR_RETURN(SessionInfo s, CheckpointTarget(owner, id));
  if (Status st = executor_.PauseSession(id); !st.ok()) return CheckpointError(id, st);
  Audit("session_pause", s, "");
  return OkStatus();
}

Status SessionRegistry::Resume(const std::string& owner, const std::string& id) {
  AIRLOCK_ASSIGN_OR_RETURN(SessionInfo s, CheckpointTarget(owner, id));
  if (Status st = executor_.ResumeSession(id); !st.ok()) return CheckpointError(id, st);
  Audit("session_resume", s, "");
  return OkStatus();
}

StatusOr<SessionInfo> SessionRegistry::Fork(const std::string& owner, const std::string& id) {
  AIRLOCK_ASSIGN_OR_RETURN(SessionInfo source, CheckpointTarget(owner, id));
  AIRLOCK_ASSIGN_OR_RETURN(SessionInfo s, NewEntry(source, config_.max_lifetime_s));
  // Packages: the runner keeps the source's (they are part of its jail).
  AIRLOCK_ASSIGN_OR_RETURN(SessionInfo forked, Establish(s, {}, [&](const runtimes::SessionSpec& copy) {
                             Status st = executor_.ForkSession(id, copy);
                             return st.ok() ? st : CheckpointError(id, st);
                           }));
  Audit("session_fork", forked, "", {{"forked_from", id}});
  return forked;
}

StatusOr<SessionInfo> SessionRegistry::Establish(const SessionInfo& s, std::vector<std::string> packages,
                                                 const std::function<Status(const runtimes::SessionSpec&)>& make) {
  // Reserve the place (counted against the limits) while the jail is made.
  AIRLOCK_RETURN_IF_ERROR(book_->Reserve(s, config_.max_per_caller, max_total_));
  const runtimes::SessionSpec spec{.id = s.id,
                                   .language = s.language,
                                   .isolation = s.isolation,
                                   .memory_mb = s.memory_mb,
                                   .cpu_budget_ms = config_.max_cpu_s * 1000,
                                   .shared = book_->shared(),
                                   .max_lifetime_s = config_.max_lifetime_s,
                                   .packages = std::move(packages),
                                   .code_mode = s.mode == "codemode"};
  if (Status st = make(spec); !st.ok()) {
    book_->Abandon(s.id);
    return st;
  }
  const bool stopping = Stopping();
  StatusOr<SessionInfo> made =
      stopping ? NotFound("shut down")
               : book_->Activate(s.id, executor_.SessionHost(s.id), audit::NowMs(), config_.max_lifetime_s);
  if (!made.ok()) {
    // Shut down meanwhile, or the book failed: nothing may stay open.
    book_->Abandon(s.id);
    (void)executor_.CloseSession(s.id);
    if (stopping || made.status().code() == StatusCode::kNotFound) return Unavailable("airlock is shutting down");
    return made.status();
  }
  return made;
}

size_t SessionRegistry::open_count() { return book_->Count(); }

std::vector<SessionInfo> SessionRegistry::List(const std::string& owner) {
  return book_->List(owner, audit::NowMs());
}

size_t SessionRegistry::ExpireNow(int64_t now_ms) {
  std::vector<SessionInfo> expired = book_->ClaimExpired(now_ms);
  for (const SessionInfo& s : expired) {
    if (executor_.AdoptSession(s.id, s.runner_host).ok()) (void)executor_.CloseSession(s.id);
    const bool idle = s.last_used_ms + static_cast<int64_t>(s.idle_timeout_s) * 1000 <= now_ms;
    Audit("session_expire", s, s.starting ? "never finished opening" : idle ? "idle timeout" : "maximum lifetime");
  }
  return expired.size();
}

void SessionRegistry::Reaper() {
  const auto every = std::chrono::milliseconds(book_->shared() ? 1000 : 250);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, every, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    ExpireNow(audit::NowMs());
    lock.lock();
  }
}

}  // namespace airlock::sessions
