// A TaskStore in PostgreSQL (state.backend "postgres", docs/state.md): the
// table mcp_tasks of schema migration 4 (db/pg_migrations.h), with the
// same rules as MemoryTaskStore (tasks/task_store.h: owner only, TTL,
// lease, per-owner cap). Every gateway of a deployment sees every task, so
// a client may poll any of them; a task whose gateway died reads `failed`
// once its lease has expired.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<state::PgDatabase> db, state::PgDatabase::Connect(dsn));
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<PgTaskStore> store, PgTaskStore::Open(db));
//
// Create serializes the tasks of one owner across gateways with a
// transaction-level advisory lock on the owner, so the cap cannot be
// overrun by two gateways at once. The lease rule is applied (and written)
// in the same transaction as each read or change.
#ifndef AIRLOCK_TASKS_PG_TASK_STORE_H_
#define AIRLOCK_TASKS_PG_TASK_STORE_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "db/pg_database.h"
#include "tasks/task_store.h"

namespace airlock::tasks {

class PgTaskStore : public TaskStore {
 public:
  // Brings the schema up to date (state::MigratePg), then opens the store.
  static StatusOr<std::unique_ptr<PgTaskStore>> Open(std::shared_ptr<state::PgDatabase> db);

  Status Create(const TaskRecord& task, size_t max_live_per_owner, int64_t now_ms) override;
  StatusOr<TaskRecord> Get(const std::string& id, const std::string& owner, int64_t now_ms) override;
  Status Finish(const std::string& id, TaskStatus status, const nlohmann::json& result, const nlohmann::json& error,
                const std::string& message, int64_t now_ms) override;
  Status RenewLease(const std::string& id, const std::string& lease_owner, int64_t expires_ms,
                    int64_t now_ms) override;
  Status RequestCancel(const std::string& id, const std::string& owner, int64_t now_ms) override;
  size_t LiveCount(const std::string& owner, int64_t now_ms) override;
  size_t Sweep(int64_t now_ms) override;

 private:
  explicit PgTaskStore(std::shared_ptr<state::PgDatabase> db) : db_(std::move(db)) {}

  const std::shared_ptr<state::PgDatabase> db_;
};

}  // namespace airlock::tasks

#endif  // AIRLOCK_TASKS_PG_TASK_STORE_H_
