// An AuditStore in PostgreSQL that several gateways share (issue 22,
// docs/state.md): the tables audit_runs, audit_calls, audit_events and
// audit_head of schema migration 1 (db/pg_migrations.h), the same
// columns and the same hash chain as SqliteAuditStore (audit/audit_chain.h),
// so Verify() means the same thing on either backend.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<state::PgDatabase> db, state::PgDatabase::Connect(dsn));
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<PgAuditStore> audit, PgAuditStore::Open(db));
//   AIRLOCK_RETURN_IF_ERROR(audit->AppendEvent({.at = now_ms, .kind = "key_revoke", .actor = "root"}));
//
// One chain under concurrent writers: every append (or batch of rows, for
// AppendRunWithCalls) is one transaction that first locks the chain head,
//   SELECT last_id, last_hash FROM audit_head WHERE singleton = 1 FOR UPDATE
// then inserts its rows with ids last_id+1, ... chained to last_hash and
// moves the head. Appenders in every process and on every gateway queue on
// that row lock, and each one reads the head its predecessor committed, so
// ids are contiguous and every prev_hash links to the row before it. A
// transaction that fails rolls its rows back with its head update: no gap.
//
// recorded_at is the database server's clock (read once the lock is held,
// one clock for every gateway), unless Options::now_ms is set. Verify()
// reads one REPEATABLE READ snapshot, in batches (bounded memory).
// PostgreSQL text cannot hold NUL: NUL bytes in text fields are stored as
// U+FFFD, like ill-formed UTF-8 (the hash covers what is stored).
#ifndef AIRLOCK_AUDIT_PG_AUDIT_STORE_H_
#define AIRLOCK_AUDIT_PG_AUDIT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "audit/audit_chain.h"
#include "audit/audit_store.h"
#include "base/status.h"
#include "db/pg_database.h"

namespace airlock::audit {

class PgAuditStore : public AuditStore {
 public:
  struct Options {
    // Time stamped into every row's recorded_at (Unix ms). Default: the
    // database server's clock. Tests inject a fake one.
    std::function<int64_t()> now_ms;
  };

  // Brings the schema up to date (state::MigratePg), then opens the log.
  static StatusOr<std::unique_ptr<PgAuditStore>> Open(std::shared_ptr<state::PgDatabase> db, Options options);
  static StatusOr<std::unique_ptr<PgAuditStore>> Open(std::shared_ptr<state::PgDatabase> db) {
    return Open(std::move(db), Options());
  }
  // Opens an existing log to read it (`airlock audit`): no DDL, nothing
  // written; NotFound if the database has no audit log.
  static StatusOr<std::unique_ptr<PgAuditStore>> OpenExisting(std::shared_ptr<state::PgDatabase> db);

  Status AppendRun(const RunRecord& run) override;
  Status AppendCall(const CallRow& call) override;
  Status AppendEvent(const EventRow& event) override;
  // One transaction for all the rows (all or none are written).
  Status AppendRunWithCalls(const RunRecord& run, const std::vector<CallRow>& calls) override;
  StatusOr<std::vector<AuditRow>> Query(const AuditQuery& query) override;
  StatusOr<VerifyReport> Verify() override;

 private:
  using Pending = std::pair<const ChainTable*, std::vector<AuditValue>>;
  PgAuditStore(std::shared_ptr<state::PgDatabase> db, Options options);
  // Appends every row, in order, in one transaction.
  Status AppendAll(std::vector<Pending> rows);

  const std::shared_ptr<state::PgDatabase> db_;
  const Options options_;
};

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_PG_AUDIT_STORE_H_
