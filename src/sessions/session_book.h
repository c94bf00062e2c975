// The rows behind sessions::SessionRegistry (docs/sessions.md): one per open
// code session, with its owner, deadlines, limits, lost reason and the
// runner host that holds its jail. Every operation the registry needs is one
// atomic step here, so that a book several gateways share (PostgreSQL,
// sessions/pg_session_book.h) keeps the same rules as the in-memory one
// (sessions/memory_session_book.h):
//
//   book.Reserve(row, max_per_caller, max_total);    // ResourceExhausted: E_SESSION_LIMIT
//   ... executor.OpenSession(...) ...
//   StatusOr<SessionInfo> s = book.Activate(id, host, now_ms, max_lifetime_s);
//   StatusOr<SessionInfo> use = book.BeginCall(owner, id, now_ms);  // NotFound: E_SESSION_NOT_FOUND
//   book.EndCall(id, now_ms);
//   StatusOr<SessionInfo> closed = book.Remove(owner, id, now_ms);
//   for (const SessionInfo& s : book.ClaimExpired(now_ms)) ... close its jail ...
//
// The rules, the same in every book:
//  * A row is expired once `ends_at_ms` (the maximum lifetime) has passed,
//    or `expires_at_ms` has passed with no call in flight.
//  * A row that is starting (reserved, its jail not made yet), expired, or
//    owned by another caller is NotFound for BeginCall and Remove and is not
//    listed: a foreign id reads exactly like an unknown one.
//  * ClaimExpired hands each expired row to exactly one caller (of every
//    gateway sharing the book) and removes it.
// Thread-safe.
#ifndef AIRLOCK_SESSIONS_SESSION_BOOK_H_
#define AIRLOCK_SESSIONS_SESSION_BOOK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace airlock::sessions {

struct SessionInfo {
  std::string id;        // "s_" + 32 hex digits
  std::string owner;     // the caller identity that opened it
  std::string endpoint{};
  std::string language{};
  std::string isolation;
  uint64_t memory_mb = 0;
  uint64_t idle_timeout_s = 0;
  int64_t created_at_ms = 0;
  int64_t last_used_ms = 0;
  int64_t expires_at_ms = 0;   // min(last use + idle timeout, ends_at_ms)
  int64_t ends_at_ms = 0;      // created + the maximum lifetime
  uint64_t calls = 0;
  std::string lost_reason;     // non-empty once lost (E_SESSION_LOST)
  bool starting = false;       // its jail is being made; not yet usable or listed
  int calls_in_flight = 0;     // BeginCall without EndCall yet
  std::string runner_host;     // the runner host holding its jail; "" for a local runner
  std::string mode{};          // "" (an interpreter) or "codemode" (its cells call tools: execute)
};

// Past its lifetime, or idle past its deadline with no call in flight.
inline bool Expired(const SessionInfo& s, int64_t now_ms) {
  return s.ends_at_ms <= now_ms || (s.calls_in_flight == 0 && s.expires_at_ms <= now_ms);
}

class SessionBook {
 public:
  virtual ~SessionBook() = default;

  // True when other gateways read and write the same rows (PostgreSQL):
  // a session then outlives the gateway that opened it.
  virtual bool shared() const = 0;

  // Adds `row` (starting) unless its owner holds max_per_caller rows or the
  // book max_total: ResourceExhausted, saying which. Every row counts,
  // starting or expired but not yet claimed.
  virtual Status Reserve(const SessionInfo& row, uint64_t max_per_caller, uint64_t max_total) = 0;
  // The jail is made on `runner_host`: the reserved row becomes usable,
  // created now, ending max_lifetime_s later. NotFound if it is gone.
  virtual StatusOr<SessionInfo> Activate(const std::string& id, const std::string& runner_host, int64_t now_ms,
                                         uint64_t max_lifetime_s) = 0;
  // Drops a reservation whose jail could not be made.
  virtual void Abandon(const std::string& id) = 0;

  // A call starts: one more call and call in flight, last used now, the
  // idle deadline moved. NotFound as described above.
  virtual StatusOr<SessionInfo> BeginCall(const std::string& owner, const std::string& id, int64_t now_ms) = 0;
  // The call ended: one call in flight less; the idle clock starts now.
  virtual void EndCall(const std::string& id, int64_t now_ms) = 0;
  // Records why the session was lost unless a reason is recorded already;
  // the row if this call recorded it (so the loss is audited once).
  virtual std::optional<SessionInfo> NoteLost(const std::string& id, const std::string& reason) = 0;

  // The session moved from runner host `from` to `to` (a draining host
  // handed it over): its row names `to` from now on, if it still named
  // `from` (a compare-and-set: of two gateways recording one move, or a
  // move racing a close, one wins). The row if it changed.
  virtual std::optional<SessionInfo> Rehome(const std::string& id, const std::string& from, const std::string& to) = 0;

  // Removes the row (close_session): NotFound as for BeginCall.
  virtual StatusOr<SessionInfo> Remove(const std::string& owner, const std::string& id, int64_t now_ms) = 0;
  // The owner's usable rows, by id.
  virtual std::vector<SessionInfo> List(const std::string& owner, int64_t now_ms) = 0;
  // Rows of every owner (for operators).
  virtual size_t Count() = 0;
  // Removes and returns the expired rows (each to one caller only). A
  // shared book also returns reservations past their lifetime (the gateway
  // that made them died while opening).
  virtual std::vector<SessionInfo> ClaimExpired(int64_t now_ms) = 0;
  // Removes and returns every row (shutdown of the only gateway). A shared
  // book returns none: its sessions outlive this gateway.
  virtual std::vector<SessionInfo> TakeAll() = 0;
};

}  // namespace airlock::sessions

#endif  // AIRLOCK_SESSIONS_SESSION_BOOK_H_
