// A SessionBook in PostgreSQL (state.backend "postgres", docs/state.md):
// the table code_sessions of schema migration 5 (db/pg_migrations.h), so
// that every gateway of a deployment serves every code session: a session
// opened through one gateway is used, listed and closed through any other,
// with the same rules as MemorySessionBook (sessions/session_book.h).
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<state::PgDatabase> db, state::PgDatabase::Connect(dsn));
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<PgSessionBook> book, PgSessionBook::Open(db, "gw-1:4242"));
//
// Each operation is one statement or one transaction:
//  * Reserve takes a transaction-level advisory lock on the table, so the
//    per-caller and total limits count the rows of every gateway and two
//    gateways cannot overrun them together;
//  * BeginCall, EndCall, NoteLost and Activate are single UPDATEs whose
//    WHERE clause applies the owner and expiry rules;
//  * Remove and ClaimExpired are DELETE ... RETURNING (ClaimExpired over
//    rows selected FOR UPDATE SKIP LOCKED), so a session is closed by one
//    gateway only, however many reap at once.
// Database errors are returned (Unavailable/Internal, PgStatus); the void
// operations and the listings log nothing and report none (an empty list,
// zero), as their callers cannot act on them.
#ifndef AIRLOCK_SESSIONS_PG_SESSION_BOOK_H_
#define AIRLOCK_SESSIONS_PG_SESSION_BOOK_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "db/pg_database.h"
#include "sessions/session_book.h"

namespace airlock::sessions {

class PgSessionBook : public SessionBook {
 public:
  // Brings the schema up to date (state::MigratePg), then opens the book.
  // `gateway` names this gateway in the rows it opens (column opened_by).
  static StatusOr<std::unique_ptr<PgSessionBook>> Open(std::shared_ptr<state::PgDatabase> db, std::string gateway);

  bool shared() const override { return true; }
  Status Reserve(const SessionInfo& row, uint64_t max_per_caller, uint64_t max_total) override;
  StatusOr<SessionInfo> Activate(const std::string& id, const std::string& runner_host, int64_t now_ms,
                                 uint64_t max_lifetime_s) override;
  void Abandon(const std::string& id) override;
  StatusOr<SessionInfo> BeginCall(const std::string& owner, const std::string& id, int64_t now_ms) override;
  void EndCall(const std::string& id, int64_t now_ms) override;
  std::optional<SessionInfo> NoteLost(const std::string& id, const std::string& reason) override;
  std::optional<SessionInfo> Rehome(const std::string& id, const std::string& from, const std::string& to) override;
  StatusOr<SessionInfo> Remove(const std::string& owner, const std::string& id, int64_t now_ms) override;
  std::vector<SessionInfo> List(const std::string& owner, int64_t now_ms) override;
  size_t Count() override;
  std::vector<SessionInfo> ClaimExpired(int64_t now_ms) override;
  std::vector<SessionInfo> TakeAll() override { return {}; }

 private:
  PgSessionBook(std::shared_ptr<state::PgDatabase> db, std::string gateway)
      : db_(std::move(db)), gateway_(std::move(gateway)) {}

  const std::shared_ptr<state::PgDatabase> db_;
  const std::string gateway_;
};

}  // namespace airlock::sessions

#endif  // AIRLOCK_SESSIONS_PG_SESSION_BOOK_H_
