// The default CodeToolStore: one SQLite file, <state dir>/codetools.db
// (WAL mode, mode 0600, never opened through a symlink), tables created if
// missing:
//   code_tools       one row per version (the proposal's fields, its hash,
//                    state, who proposed/decided and when, the approval)
//   code_tools_meta  one row: a generation counter bumped by every change
// One connection per store object, serialized by a mutex. Several processes
// may share the file (`airlock tools approve` while a server runs): every
// change is one IMMEDIATE transaction that re-reads the row it changes, and
// Generation() combines PRAGMA data_version (did another connection commit?)
// with the counter row, so a server polling it sees the CLI's approvals.
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto store, SqliteCodeToolStore::Open(config.CodeToolsDbPath()));
//   AIRLOCK_ASSIGN_OR_RETURN(std::vector<CodeTool> tools, store->Active("team"));
//
// Integrity (G-D9): every read recomputes HashOf() from the stored columns;
// a row whose columns were edited behind the store's back reads back with
// intact = false, is left out of Active() and cannot be approved. Someone
// who can write the file can also rewrite the hash column: the file must be
// writable only by airlock's user.
#ifndef AIRLOCK_CODETOOLS_SQLITE_CODE_TOOL_STORE_H_
#define AIRLOCK_CODETOOLS_SQLITE_CODE_TOOL_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite_db.h"
#include "base/status.h"
#include "codetools/code_tool_store.h"

namespace airlock::codetools {

class SqliteCodeToolStore : public CodeToolStore {
 public:
  struct Options {
    // Unix ms stamped into proposed_at / decided_at. Default: the system clock.
    std::function<int64_t()> now_ms;
  };

  // Opens `path`, creating it (mode 0600, never through a symlink) and the
  // tables if missing. An existing file's mode is tightened to 0600.
  static StatusOr<std::unique_ptr<SqliteCodeToolStore>> Open(const std::string& path, Options options = {});

  StatusOr<CodeTool> Propose(const Proposal& p, const std::string& proposer, const std::string& endpoint) override;
  Status Approve(const std::string& id, const std::string& actor, const Approval& approval) override;
  Status Reject(const std::string& id, const std::string& actor, const std::string& reason) override;
  Status Revoke(const std::string& id, const std::string& actor, const std::string& reason) override;
  StatusOr<CodeTool> Get(const std::string& id) override;
  StatusOr<std::vector<CodeTool>> List(std::optional<State> state, const std::string& endpoint) override;
  StatusOr<std::vector<CodeTool>> Active(const std::string& endpoint) override;
  // Comparable only with earlier values of the same object; never decreases.
  int64_t Generation() override;

 private:
  SqliteCodeToolStore(audit::SqliteDb db, Options options);
  // Runs `body` in one BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) that
  // also bumps the generation counter. Caller holds mu_.
  Status InTransaction(const std::function<Status()>& body);
  // The row `id` (NotFound if none). Caller holds mu_.
  StatusOr<CodeTool> GetLocked(const std::string& id);
  // Every row matching the optional filters, newest first. Caller holds mu_.
  StatusOr<std::vector<CodeTool>> Select(const std::string& where, const std::vector<std::string>& args);

  std::mutex mu_;
  Options options_;
  audit::SqliteDb db_;  // declared before the statements: they are finalized first
  audit::SqliteStmt data_version_, read_counter_;
  // Generation() = counter + external_edits_: the counter row counts changes
  // made through a store; external_edits_ counts commits by other
  // connections that left it alone (rows edited with raw SQL).
  int64_t seen_data_version_ = -1;
  int64_t counter_ = -1;
  int64_t external_edits_ = 0;
  bool dirty_ = true;  // this connection committed since the counter was read
};

}  // namespace airlock::codetools

#endif  // AIRLOCK_CODETOOLS_SQLITE_CODE_TOOL_STORE_H_
