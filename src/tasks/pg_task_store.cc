#include "tasks/pg_task_store.h"

#include "db/pg_migrations.h"

namespace airlock::tasks {
namespace {

using nlohmann::json;
using state::PgDatabase;

constexpr char kColumns[] =
    "id, owner, tool, run_id, status, status_message, created_ms, updated_ms, ttl_ms, lease_owner, "
    "lease_expires_ms, result, error, cancel_requested";

TaskStatus StatusFromName(const std::string& s) {
  if (s == "working") return TaskStatus::kWorking;
  if (s == "completed") return TaskStatus::kCompleted;
  if (s == "cancelled") return TaskStatus::kCancelled;
  return TaskStatus::kFailed;
}

json ParseOrNull(const std::string& text) { return text.empty() ? json() : json::parse(text, nullptr, false); }

TaskRecord ReadRow(const pqxx::row& r) {
  TaskRecord t;
  t.id = r[0].as<std::string>();
  t.owner = r[1].as<std::string>();
  t.tool = r[2].as<std::string>();
  t.run_id = r[3].as<std::string>();
  t.status = StatusFromName(r[4].as<std::string>());
  t.status_message = r[5].as<std::string>();
  t.created_ms = r[6].as<int64_t>();
  t.updated_ms = r[7].as<int64_t>();
  t.ttl_ms = r[8].as<int64_t>();
  t.lease_owner = r[9].as<std::string>();
  t.lease_expires_ms = r[10].as<int64_t>();
  t.result = ParseOrNull(r[11].as<std::string>());
  t.error = ParseOrNull(r[12].as<std::string>());
  t.cancel_requested = r[13].as<bool>();
  return t;
}

// The lease rule, written: working rows past their lease become failed.
// `where` narrows it ("id = $2" or "owner = $2").
void ApplyLeases(pqxx::transaction_base& tx, const char* where, const std::string& key, int64_t now_ms) {
  const json error = LeaseExpiredError();
  tx.exec_params(std::string("UPDATE mcp_tasks SET status = 'failed', error = $3, status_message = $4, "
                             "updated_ms = lease_expires_ms WHERE ") +
                     where + " AND status = 'working' AND lease_expires_ms <= $1",
                 now_ms, key, error.dump(), error["message"].get<std::string>());
}

void DeleteExpired(pqxx::transaction_base& tx, int64_t now_ms) {
  tx.exec_params("DELETE FROM mcp_tasks WHERE created_ms + ttl_ms <= $1", now_ms);
}

}  // namespace

StatusOr<std::unique_ptr<PgTaskStore>> PgTaskStore::Open(std::shared_ptr<PgDatabase> db) {
  if (db == nullptr) return InvalidArgument("task store: no database");
  AIRLOCK_RETURN_IF_ERROR(state::MigratePg(*db));
  return std::unique_ptr<PgTaskStore>(new PgTaskStore(std::move(db)));
}

Status PgTaskStore::Create(const TaskRecord& task, size_t max_live_per_owner, int64_t now_ms) {
  if (state::HasNul(task.owner) || state::HasNul(task.tool) || state::HasNul(task.status_message)) {
    return InvalidArgument("task fields cannot hold a NUL byte");
  }
  return db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    // One owner's creations are serialized across gateways (the cap).
    tx.exec_params("SELECT pg_advisory_xact_lock(hashtext($1))", "mcp_tasks:" + task.owner);
    DeleteExpired(tx, now_ms);
    ApplyLeases(tx, "owner = $2", task.owner, now_ms);
    const int64_t live =
        tx.exec_params1("SELECT count(*) FROM mcp_tasks WHERE owner = $1 AND status = 'working'", task.owner)[0]
            .as<int64_t>();
    if (static_cast<size_t>(live) >= max_live_per_owner) {
      return ResourceExhausted("this caller already has " + std::to_string(live) +
                               " tasks working (tasks.max_per_caller)");
    }
    pqxx::result r = tx.exec_params(
        std::string("INSERT INTO mcp_tasks (") + kColumns +
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING",
        task.id, task.owner, task.tool, task.run_id, TaskStatusName(task.status), task.status_message,
        task.created_ms, task.updated_ms, task.ttl_ms, task.lease_owner, task.lease_expires_ms,
        task.result.is_null() ? std::string() : task.result.dump(),
        task.error.is_null() ? std::string() : task.error.dump(), task.cancel_requested);
    if (r.affected_rows() != 1) return Internal("duplicate task id");
    return OkStatus();
  });
}

StatusOr<TaskRecord> PgTaskStore::Get(const std::string& id, const std::string& owner, int64_t now_ms) {
  std::optional<TaskRecord> out;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    out.reset();
    ApplyLeases(tx, "id = $2", id, now_ms);
    pqxx::result r = tx.exec_params(std::string("SELECT ") + kColumns +
                                        " FROM mcp_tasks WHERE id = $1 AND owner = $2 AND created_ms + ttl_ms > $3",
                                    id, owner, now_ms);
    if (!r.empty()) out = ReadRow(r[0]);
    return OkStatus();
  });
  if (!st.ok()) return st;
  if (!out) return NotFound("Task not found");
  return *out;
}

Status PgTaskStore::Finish(const std::string& id, TaskStatus status, const json& result, const json& error,
                           const std::string& message, int64_t now_ms) {
  if (state::HasNul(message)) return InvalidArgument("status message cannot hold a NUL byte");
  return db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    ApplyLeases(tx, "id = $2", id, now_ms);
    pqxx::result r = tx.exec_params(
        "UPDATE mcp_tasks SET status = $2, result = $3, error = $4, status_message = $5, updated_ms = $6 "
        "WHERE id = $1 AND status = 'working' AND created_ms + ttl_ms > $6",
        id, TaskStatusName(status), status == TaskStatus::kCompleted ? result.dump() : std::string(),
        status == TaskStatus::kFailed ? error.dump() : std::string(), message, now_ms);
    if (r.affected_rows() == 1) return OkStatus();
    pqxx::result s =
        tx.exec_params("SELECT status FROM mcp_tasks WHERE id = $1 AND created_ms + ttl_ms > $2", id, now_ms);
    if (s.empty()) return NotFound("Task not found");
    return FailedPrecondition("task is already " + s[0][0].as<std::string>());
  });
}

Status PgTaskStore::RequestCancel(const std::string& id, const std::string& owner, int64_t now_ms) {
  return db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    ApplyLeases(tx, "id = $2", id, now_ms);
    pqxx::result r = tx.exec_params(
        "UPDATE mcp_tasks SET cancel_requested = true WHERE id = $1 AND owner = $2 AND created_ms + ttl_ms > $3 "
        "AND status = 'working'",
        id, owner, now_ms);
    if (r.affected_rows() == 1) return OkStatus();
    if (tx.exec_params("SELECT 1 FROM mcp_tasks WHERE id = $1 AND owner = $2 AND created_ms + ttl_ms > $3", id, owner,
                       now_ms)
            .empty()) {
      return NotFound("Task not found");
    }
    return OkStatus();  // already terminal
  });
}

Status PgTaskStore::RenewLease(const std::string& id, const std::string& lease_owner, int64_t expires_ms,
                               int64_t now_ms) {
  return db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    ApplyLeases(tx, "id = $2", id, now_ms);
    pqxx::result r = tx.exec_params(
        "UPDATE mcp_tasks SET lease_expires_ms = $3 WHERE id = $1 AND lease_owner = $2 AND status = 'working'", id,
        lease_owner, expires_ms);
    if (r.affected_rows() == 1) return OkStatus();
    if (tx.exec_params("SELECT 1 FROM mcp_tasks WHERE id = $1", id).empty()) return NotFound("Task not found");
    return FailedPrecondition("task is not working under this lease");
  });
}

size_t PgTaskStore::LiveCount(const std::string& owner, int64_t now_ms) {
  int64_t n = 0;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    ApplyLeases(tx, "owner = $2", owner, now_ms);
    n = tx.exec_params1(
              "SELECT count(*) FROM mcp_tasks WHERE owner = $1 AND status = 'working' AND created_ms + ttl_ms > $2",
              owner, now_ms)[0]
            .as<int64_t>();
    return OkStatus();
  });
  return st.ok() ? static_cast<size_t>(n) : 0;
}

size_t PgTaskStore::Sweep(int64_t now_ms) {
  size_t n = 0;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    n = tx.exec_params("DELETE FROM mcp_tasks WHERE created_ms + ttl_ms <= $1", now_ms).affected_rows();
    return OkStatus();
  });
  return st.ok() ? n : 0;
}

}  // namespace airlock::tasks
