// The default AuditStore: one SQLite file (WAL mode, created with mode 0600),
// tables audit_runs, audit_calls, audit_events and audit_head, created if
// missing. One connection, serialized by a mutex; several processes may share
// the file (each append is one IMMEDIATE transaction that reads the chain
// head from the file itself).
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<SqliteAuditStore> audit,
//                            SqliteAuditStore::Open("/var/lib/airlock/audit.db"));
//   AIRLOCK_RETURN_IF_ERROR(audit->AppendEvent({.at = now_ms, .kind = "key_revoke",
//                                               .actor = "root", .target = "k_0123"}));
//
// Tamper evidence (the chain is audit/audit_chain.h's, shared with
// PgAuditStore): ONE hash chain across all three tables. Every row gets the
// next `id` of a single sequence (1, 2, 3, ... whatever its table) and stores
//   prev_hash = row_hash of row id-1   (64 '0's for id 1)
//   row_hash  = hex sha256(prev_hash || canonical)
// where `canonical` is the compact JSON object of the row's columns with keys
// sorted, plus "table" ("runs" | "calls" | "events"), "id" and "recorded_at";
// JSON-valued fields (connectors, limits, args_redacted, detail) appear as
// the exact text stored. audit_head keeps the id and hash of the last row.
// Verify() walks all rows in id order and reports the first
//   - modified row: its content does not hash to its row_hash, or a column
//     holds a value of the wrong type;
//   - deleted row(s): a gap in ids, a prev_hash that differs from the previous
//     row's row_hash, or a head that names a later id than the last row.
// Someone who can write the file can still rewrite the whole chain from some
// row on; anchor VerifyReport::head_hash elsewhere (another host, a signed
// log) to catch that. Text is stored as valid UTF-8 (ill-formed sequences
// are replaced with U+FFFD when appended).
#ifndef AIRLOCK_AUDIT_SQLITE_AUDIT_STORE_H_
#define AIRLOCK_AUDIT_SQLITE_AUDIT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "audit/audit_store.h"
#include "db/sqlite_db.h"
#include "base/status.h"

namespace airlock::audit {

class SqliteAuditStore : public AuditStore {
 public:
  struct Options {
    // Time stamped into every row's recorded_at (Unix ms). Default: the
    // system clock. Tests inject a fake one.
    std::function<int64_t()> now_ms;
    // true: every append is fsynced before it returns (synchronous=FULL);
    // false: it is in the WAL (safe against any crash of this process, not
    // against a power loss; synchronous=NORMAL).
    bool sync_every_record = true;
  };

  // Opens `path`, creating it (mode 0600, never through a symlink) and the
  // tables if missing. An existing file's mode is tightened to 0600.
  static StatusOr<std::unique_ptr<SqliteAuditStore>> Open(const std::string& path, Options options);
  static StatusOr<std::unique_ptr<SqliteAuditStore>> Open(const std::string& path) {
    return Open(path, Options());
  }

  // Opens an existing log to read it (`airlock audit`): nothing is created,
  // migrated or written, so read permission on the file is all it needs (an
  // auditor need not be able to write the log). When the log is in WAL mode
  // and its -shm file can neither be read nor created, it is opened as
  // immutable (a snapshot of the main file). Appends fail.
  static StatusOr<std::unique_ptr<SqliteAuditStore>> OpenReadOnly(const std::string& path);

  Status AppendRun(const RunRecord& run) override;
  Status AppendCall(const CallRow& call) override;
  Status AppendEvent(const EventRow& event) override;
  // One IMMEDIATE transaction for all the rows (all or none are written).
  Status AppendRunWithCalls(const RunRecord& run, const std::vector<CallRow>& calls) override;
  StatusOr<std::vector<AuditRow>> Query(const AuditQuery& query) override;
  StatusOr<VerifyReport> Verify() override;

  // Opaque per-table helpers (defined in the .cc).
  struct Table;
  using Value = std::variant<int64_t, std::string>;

 private:
  SqliteAuditStore(SqliteDb db, Options options);
  Status Prepare();
  Status Append(const Table& table, std::vector<Value> values);
  // Appends every (table, values) pair in one transaction.
  Status AppendAll(std::vector<std::pair<const Table*, std::vector<Value>>> rows);
  Status AppendLocked(const Table& table, std::vector<Value>& values);

  std::mutex mu_;
  Options options_;
  SqliteDb db_;  // declared before the statements: they are finalized first
  SqliteStmt begin_, commit_, rollback_, read_head_, write_head_;
  std::vector<SqliteStmt> insert_;  // per table
  std::vector<SqliteStmt> query_;   // per table
};

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_SQLITE_AUDIT_STORE_H_
