// The table of MCP tasks (the io.modelcontextprotocol/tasks extension,
// docs/mcp.md "Tasks"): one row per task-augmented tools/call, from its
// creation (before the CreateTaskResult is sent) to its expiry.
//
//   MemoryTaskStore store;
//   store.Create(row, /*max_live_per_owner=*/8);            // durable before the reply
//   StatusOr<TaskRecord> t = store.Get(id, owner, now_ms);  // NotFound: unknown, expired or not owner's
//   store.Finish(id, TaskStatus::kCompleted, result, nullptr, "", now_ms);
//
// Every method takes the time (`now_ms`, Unix ms) from its caller, so the
// rules below are tested with a fake clock:
//   - a task is gone once created_ms + ttl_ms has passed (Get: NotFound);
//   - a task still `working` whose lease has expired (the gateway running it
//     died without finishing it) reads as `failed` with a JSON-RPC error
//     saying so, never `working` forever;
//   - another owner's task is NotFound, exactly like an unknown id.
// Implementations are thread-safe.
#ifndef AIRLOCK_TASKS_TASK_STORE_H_
#define AIRLOCK_TASKS_TASK_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::tasks {

// The extension's statuses airlock uses (it never asks for input, so no
// input_required).
enum class TaskStatus { kWorking, kCompleted, kFailed, kCancelled };

// "working", "completed", "failed", "cancelled".
const char* TaskStatusName(TaskStatus status);
inline bool IsTerminal(TaskStatus status) { return status != TaskStatus::kWorking; }

// The JSON-RPC error (code -32603) of a task whose lease expired.
nlohmann::json LeaseExpiredError();

struct TaskRecord {
  std::string id;     // random, >= 128 bits (NewTaskId)
  std::string owner;  // the caller's identity (governance::Caller::identity)
  std::string tool;   // "run_code", "execute"
  std::string run_id; // the audit log's id of the run
  TaskStatus status = TaskStatus::kWorking;
  std::string status_message;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t ttl_ms = 0;            // from created_ms; then the task is gone
  std::string lease_owner;       // the gateway instance running it
  int64_t lease_expires_ms = 0;  // working past this: failed (its gateway died)
  nlohmann::json result;         // completed: the CallToolResult
  nlohmann::json error;          // failed: the JSON-RPC error {code, message}
  // tasks/cancel reached a gateway other than the one running the task: the
  // running gateway sees this when it renews its lease and stops the run.
  bool cancel_requested = false;
};

// A new task id: "t_" and 32 hex digits from getrandom (128 bits).
StatusOr<std::string> NewTaskId();

class TaskStore {
 public:
  virtual ~TaskStore() = default;

  // Records a new task. ResourceExhausted when its owner already holds
  // `max_live_per_owner` working tasks; Internal on a duplicate id.
  virtual Status Create(const TaskRecord& task, size_t max_live_per_owner, int64_t now_ms) = 0;

  // The task as `owner` sees it at `now_ms` (lease and TTL applied).
  // NotFound: unknown, expired, or another owner's.
  virtual StatusOr<TaskRecord> Get(const std::string& id, const std::string& owner, int64_t now_ms) = 0;

  // Ends a working task: `result` (completed), `error` (failed), neither
  // (cancelled). FailedPrecondition if it is already terminal (e.g. its lease
  // expired first); NotFound if it is gone.
  virtual Status Finish(const std::string& id, TaskStatus status, const nlohmann::json& result,
                        const nlohmann::json& error, const std::string& message, int64_t now_ms) = 0;

  // Extends the lease of a working task held by `lease_owner`.
  virtual Status RenewLease(const std::string& id, const std::string& lease_owner, int64_t expires_ms,
                            int64_t now_ms) = 0;

  // Marks `owner`'s working task for cancellation by whichever gateway runs
  // it (cancel_requested). A terminal task is left as it is. NotFound as Get.
  virtual Status RequestCancel(const std::string& id, const std::string& owner, int64_t now_ms) = 0;

  // Working tasks of `owner` at `now_ms`.
  virtual size_t LiveCount(const std::string& owner, int64_t now_ms) = 0;

  // Drops the expired tasks; returns how many.
  virtual size_t Sweep(int64_t now_ms) = 0;
};

// In memory: tasks live as long as the process (a restart loses them;
// clients then get "task not found", which the extension allows).
class MemoryTaskStore : public TaskStore {
 public:
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
  // Applies the lease rule to `t` at `now_ms` (a working task past its
  // lease becomes failed). Caller holds mu_.
  static void ApplyLease(TaskRecord& t, int64_t now_ms);
  void SweepLocked(int64_t now_ms);

  std::mutex mu_;
  std::map<std::string, TaskRecord> tasks_;  // key: id
};

}  // namespace airlock::tasks

#endif  // AIRLOCK_TASKS_TASK_STORE_H_
