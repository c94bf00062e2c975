// The server's book of open sessions (docs/sessions.md): who owns which,
// when each expires, and the limits on how many there are. The sessions
// themselves (jails, interpreters) live in the executor (the runner
// process, or a runner host); this registry opens and closes them there and
// remembers what the executor cannot: owners, idle and lifetime deadlines,
// why a session was lost, and which runner host holds it. The rows are in
// a SessionBook (sessions/session_book.h): in memory, or in PostgreSQL
// shared by every gateway, so that any gateway serves any session.
//
//   SessionRegistry registry(executor, config.sessions, config.ResolvedMaxSessions(), audit, book);
//   StatusOr<SessionInfo> s = registry.Open(owner, {.language = "python"});
//   StatusOr<SessionInfo> use = registry.BeginCall(owner, s->id);   // NotFound: E_SESSION_NOT_FOUND
//   ... executor.Run(request with session_id) ...
//   registry.EndCall(s->id, result);   // notes E_SESSION_LOST
//   registry.Close(owner, s->id);
//   registry.Pause(owner, id); registry.Resume(owner, id);   // WASM-tier Python only
//   StatusOr<SessionInfo> copy = registry.Fork(owner, id);  // a new session, same state
//
// A session owned by someone else is reported exactly like an unknown one.
// Expired sessions (idle or past their lifetime) are closed by a background
// thread (with a shared book, by whichever gateway claims them first) and
// forgotten. Destroying the registry closes every session of an unshared
// book; a shared book's sessions outlive it (other gateways serve them).
// Before a session's cell or close goes to the executor, the registry tells
// it the session's runner host (CodeExecutor::AdoptSession), so a gateway
// reaches sessions another gateway opened. When the executor moves a
// session off a draining runner host (CodeExecutor::SetSessionMovedHandler,
// which the registry sets for its lifetime) the row is rewritten to name the
// new host (SessionBook::Rehome; audited as "session_move").
// Thread-safe.
#ifndef AIRLOCK_SESSIONS_SESSION_REGISTRY_H_
#define AIRLOCK_SESSIONS_SESSION_REGISTRY_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "audit/audit_log.h"
#include "base/status.h"
#include "config/config.h"
#include "runtimes/code_executor.h"
#include "sessions/session_book.h"

namespace airlock::sessions {

struct OpenRequest {
  std::string endpoint{};
  std::string language{};
  std::string isolation = "native";
  uint64_t idle_timeout_s = 0;  // 0: the config's default
  uint64_t memory_mb = 0;       // 0: the language default
  std::vector<std::string> packages{};  // runtimes::SessionSpec::packages
  std::string mode{};  // "" or "codemode" (runtimes::SessionSpec::code_mode)
};

// {session_id, language, isolation, idle_timeout_s, expires_at (ISO 8601), ...}.
nlohmann::json ToJson(const SessionInfo& s, const config::SessionsConfig& config);

// The tool error code (docs/sessions.md) of an error of Open, Close, Pause,
// Resume or Fork: "E_SESSION_NOT_FOUND" (NotFound), "E_SESSION_LIMIT"
// (ResourceExhausted), the code a message starts with ("E_SESSION_BUSY: ...",
// "E_SESSION_LOST: ...", "E_SESSION_NOT_PAUSABLE: ..."), "runner_unavailable"
// (Unavailable, DeadlineExceeded), else `fallback`.
std::string SessionErrorCode(const Status& st, const std::string& fallback);
// `st`'s message without the error code it starts with, if any.
std::string SessionErrorMessage(const Status& st);

class SessionRegistry {
 public:
  // `executor` and `audit` (may be null) must outlive the registry. The
  // rows go to `book` (state::OpenSessionBook); null: a MemorySessionBook.
  SessionRegistry(runtimes::CodeExecutor& executor, const config::SessionsConfig& config, uint64_t max_total,
                  audit::AuditLog* audit, std::shared_ptr<SessionBook> book = nullptr);
  ~SessionRegistry();  // closes every session of an unshared book
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // ResourceExhausted past max_per_caller or max_total (E_SESSION_LIMIT);
  // InvalidArgument for a timeout_s above the maximum; the executor's
  // errors otherwise (NotFound: no sessions for that language).
  StatusOr<SessionInfo> Open(const std::string& owner, const OpenRequest& request);

  // Marks a call as started: NotFound for an unknown, expired or foreign id;
  // the info (with lost_reason set when the session is lost) otherwise.
  // Moves the idle deadline.
  StatusOr<SessionInfo> BeginCall(const std::string& owner, const std::string& id);
  // After the executor answered: a lost session (E_SESSION_LOST) is noted;
  // E_SESSION_NOT_FOUND from the executor (a restarted runner) and
  // runner_unavailable (the runner stopped) become E_SESSION_LOST in
  // `result`.
  void NoteResult(const std::string& id, runtimes::RunResult& result);
  // Every BeginCall that succeeded ends here (with the result when the cell
  // ran, else null): the idle clock starts again now. While a call is in
  // flight its session does not expire for idleness.
  void EndCall(const std::string& id, runtimes::RunResult* result);

  // NotFound as in BeginCall.
  Status Close(const std::string& owner, const std::string& id);

  // Checkpoints (docs/sessions.md, "Pause, resume and fork"): the executor's
  // PauseSession / ResumeSession on the session's runner. The owner rule is
  // Close's (NotFound); a lost session is FailedPrecondition
  // "E_SESSION_LOST: <why>"; a call in flight, FailedPrecondition
  // "E_SESSION_BUSY: ..."; otherwise the executor's errors (code_executor.h;
  // "E_SESSION_NOT_PAUSABLE: ..." for a language that cannot be paused;
  // SessionErrorCode names each error's code). A session the runner no
  // longer has (it restarted), or whose host this gateway cannot reach, is
  // noted lost. Neither is a call: `calls`, the idle deadline and the
  // lifetime stay as they were, so a paused session expires (and its image
  // goes) as a live one would.
  Status Pause(const std::string& owner, const std::string& id);
  Status Resume(const std::string& owner, const std::string& id);
  // A new session of `owner` holding a copy of session `id`'s state
  // (CodeExecutor::ForkSession, on the source's runner): a fresh id as
  // Open makes; the source's endpoint, language, isolation, memory, idle
  // timeout and mode; its own idle deadline and maximum lifetime, counted
  // from now. It counts against max_per_caller and max_total as an open
  // does (ResourceExhausted: E_SESSION_LIMIT). Errors otherwise as Pause's;
  // on any the new row is gone. Audited as session_fork (target: the copy;
  // detail forked_from: the source).
  StatusOr<SessionInfo> Fork(const std::string& owner, const std::string& id);
  std::vector<SessionInfo> List(const std::string& owner);

  const config::SessionsConfig& config() const { return config_; }
  uint64_t max_total() const { return max_total_; }
  // Sessions open now, of every caller (for operators).
  size_t open_count();

  // Closes what has expired by `now_ms`; returns how many. The background
  // thread calls it every 250 ms (every second with a shared book); tests
  // may call it directly.
  size_t ExpireNow(int64_t now_ms);

  // Whether other gateways share the book (and so serve these sessions).
  bool shared() const { return book_->shared(); }

 private:
  void Reaper();
  void Audit(const std::string& kind, const SessionInfo& s, const std::string& reason,
             const nlohmann::json& extra = nlohmann::json::object());
  // Records `reason` as why `id` was lost (audited once, by whoever
  // recorded it).
  void NoteLost(const std::string& id, const std::string& reason);
  // The standard NotFound for an unknown, expired or foreign id.
  static Status NoSuchSession(const std::string& id);
  // `owner`'s usable row `id`, for a checkpoint: NotFound as in BeginCall,
  // E_SESSION_LOST or E_SESSION_BUSY as Pause says; routed to its runner
  // host (AdoptSession; a host out of reach loses it). Moves no deadline.
  StatusOr<SessionInfo> CheckpointTarget(const std::string& owner, const std::string& id);
  // An executor's checkpoint error on session `id`: NotFound (its runner
  // restarted) and E_SESSION_LOST are noted as lost and answered as
  // E_SESSION_LOST; the rest pass through.
  Status CheckpointError(const std::string& id, const Status& st);
  // Whether the registry is shutting down.
  bool Stopping();
  // Open's and Fork's common path: reserves `s` in the book (counted
  // against the limits), has the runner make it (`make`, given its spec
  // with `packages`) and activates it. On any failure nothing stays
  // reserved or open; `make`'s error is returned as it is.
  StatusOr<SessionInfo> Establish(const SessionInfo& s, std::vector<std::string> packages,
                                  const std::function<Status(const runtimes::SessionSpec&)>& make);

  runtimes::CodeExecutor& executor_;
  const config::SessionsConfig config_;
  const uint64_t max_total_;
  audit::AuditLog* const audit_;

  const std::shared_ptr<SessionBook> book_;

  std::mutex mu_;  // guards stopping_
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread reaper_;
};

// Ends a call that BeginCall started when it goes out of scope, on every
// path (EndCall without a result):
//   StatusOr<SessionInfo> s = registry.BeginCall(owner, id);
//   if (!s.ok()) return ...;
//   ScopedCall call(registry, id);
class ScopedCall {
 public:
  ScopedCall(SessionRegistry& registry, std::string id) : registry_(registry), id_(std::move(id)) {}
  ~ScopedCall() { registry_.EndCall(id_, nullptr); }
  ScopedCall(const ScopedCall&) = delete;
  ScopedCall& operator=(const ScopedCall&) = delete;

 private:
  SessionRegistry& registry_;
  const std::string id_;
};

}  // namespace airlock::sessions

#endif  // AIRLOCK_SESSIONS_SESSION_REGISTRY_H_
