// A CodeToolStore in PostgreSQL that several gateways share (issue 22,
// docs/state.md): the tables code_tools and code_tools_meta of schema
// migration 2 (db/pg_migrations.h), the same columns, rules and
// integrity check as SqliteCodeToolStore (codetools/code_tool_rows.h).
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<state::PgDatabase> db, state::PgDatabase::Connect(dsn));
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<PgCodeToolStore> store, PgCodeToolStore::Open(db));
//   AIRLOCK_ASSIGN_OR_RETURN(std::vector<CodeTool> tools, store->Active("team"));
//
// Every change is one transaction that first locks code_tools_meta's row
// (SELECT ... FOR UPDATE), so changes from all gateways are serialized as
// SQLite's IMMEDIATE transactions serialize them on one file (version
// numbers, the duplicate check and supersession cannot race). A
// statement-level trigger on code_tools bumps code_tools_meta.generation
// on any change, through a store or with plain SQL; Generation() reads it,
// so a gateway polling it (`airlock serve` does every 500 ms) sees an
// approval or revocation made on any other gateway within that interval.
// PostgreSQL text cannot hold NUL: a proposal or decision with a NUL byte
// in a text field is refused (InvalidArgument).
#ifndef AIRLOCK_CODETOOLS_PG_CODE_TOOL_STORE_H_
#define AIRLOCK_CODETOOLS_PG_CODE_TOOL_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "codetools/code_tool_store.h"
#include "db/pg_database.h"

namespace airlock::codetools {

class PgCodeToolStore : public CodeToolStore {
 public:
  struct Options {
    // Unix ms stamped into proposed_at / decided_at. Default: the system clock.
    std::function<int64_t()> now_ms;
  };

  // Brings the schema up to date (state::MigratePg), then opens the store.
  static StatusOr<std::unique_ptr<PgCodeToolStore>> Open(std::shared_ptr<state::PgDatabase> db,
                                                         Options options = {});

  StatusOr<CodeTool> Propose(const Proposal& p, const std::string& proposer, const std::string& endpoint) override;
  Status Approve(const std::string& id, const std::string& actor, const Approval& approval) override;
  Status Reject(const std::string& id, const std::string& actor, const std::string& reason) override;
  Status Revoke(const std::string& id, const std::string& actor, const std::string& reason) override;
  StatusOr<CodeTool> Get(const std::string& id) override;
  StatusOr<std::vector<CodeTool>> List(std::optional<State> state, const std::string& endpoint) override;
  StatusOr<std::vector<CodeTool>> Active(const std::string& endpoint) override;
  // One query. Comparable only with earlier values of the same object;
  // never decreases; unchanged while the database cannot be read.
  int64_t Generation() override;

 private:
  PgCodeToolStore(std::shared_ptr<state::PgDatabase> db, Options options);
  // Runs `body` in one transaction holding the store's lock row.
  Status Change(const state::PgDatabase::Body& body);

  const std::shared_ptr<state::PgDatabase> db_;
  Options options_;
  std::mutex mu_;                // guards the two fields below
  int64_t seen_counter_ = -1;    // code_tools_meta.generation when last read
  int64_t generation_ = 0;       // +1 each time it was seen to change
};

}  // namespace airlock::codetools

#endif  // AIRLOCK_CODETOOLS_PG_CODE_TOOL_STORE_H_
