#include "tasks/task_store.h"

#include "base/random.h"

namespace airlock::tasks {

using nlohmann::json;

const char* TaskStatusName(TaskStatus status) {
  switch (status) {
    case TaskStatus::kWorking: return "working";
    case TaskStatus::kCompleted: return "completed";
    case TaskStatus::kFailed: return "failed";
    case TaskStatus::kCancelled: return "cancelled";
  }
  return "failed";
}

json LeaseExpiredError() {
  return {{"code", -32603},
          {"message", "the gateway running this task stopped before it finished (its lease expired); the run's "
                      "outcome is unknown"}};
}

StatusOr<std::string> NewTaskId() {
  StatusOr<std::string> hex = RandomHex(16);
  if (!hex.ok()) return hex.status();
  return "t_" + *hex;
}

void MemoryTaskStore::ApplyLease(TaskRecord& t, int64_t now_ms) {
  if (t.status != TaskStatus::kWorking || now_ms < t.lease_expires_ms) return;
  t.status = TaskStatus::kFailed;
  t.error = LeaseExpiredError();
  t.status_message = t.error["message"].get<std::string>();
  t.updated_ms = t.lease_expires_ms;
}

void MemoryTaskStore::SweepLocked(int64_t now_ms) {
  std::erase_if(tasks_, [now_ms](const auto& kv) { return kv.second.created_ms + kv.second.ttl_ms <= now_ms; });
}

Status MemoryTaskStore::Create(const TaskRecord& task, size_t max_live_per_owner, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked(now_ms);
  size_t live = 0;
  for (auto& [id, t] : tasks_) {
    ApplyLease(t, now_ms);
    if (t.owner == task.owner && t.status == TaskStatus::kWorking) ++live;
  }
  if (live >= max_live_per_owner) {
    return ResourceExhausted("this caller already has " + std::to_string(live) +
                             " tasks working (tasks.max_per_caller)");
  }
  if (!tasks_.emplace(task.id, task).second) return Internal("duplicate task id");
  return OkStatus();
}

StatusOr<TaskRecord> MemoryTaskStore::Get(const std::string& id, const std::string& owner, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked(now_ms);
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.owner != owner) return NotFound("Task not found");
  ApplyLease(it->second, now_ms);
  return it->second;
}

Status MemoryTaskStore::Finish(const std::string& id, TaskStatus status, const json& result, const json& error,
                               const std::string& message, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return NotFound("Task not found");
  TaskRecord& t = it->second;
  ApplyLease(t, now_ms);
  if (IsTerminal(t.status)) return FailedPrecondition(std::string("task is already ") + TaskStatusName(t.status));
  t.status = status;
  t.result = status == TaskStatus::kCompleted ? result : json();
  t.error = status == TaskStatus::kFailed ? error : json();
  t.status_message = message;
  t.updated_ms = now_ms;
  return OkStatus();
}

Status MemoryTaskStore::RenewLease(const std::string& id, const std::string& lease_owner, int64_t expires_ms,
                                   int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return NotFound("Task not found");
  TaskRecord& t = it->second;
  ApplyLease(t, now_ms);
  if (t.status != TaskStatus::kWorking || t.lease_owner != lease_owner) {
    return FailedPrecondition("task is not working under this lease");
  }
  t.lease_expires_ms = expires_ms;
  return OkStatus();
}

Status MemoryTaskStore::RequestCancel(const std::string& id, const std::string& owner, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked(now_ms);
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second.owner != owner) return NotFound("Task not found");
  ApplyLease(it->second, now_ms);
  if (it->second.status == TaskStatus::kWorking) it->second.cancel_requested = true;
  return OkStatus();
}

size_t MemoryTaskStore::LiveCount(const std::string& owner, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked(now_ms);
  size_t n = 0;
  for (auto& [id, t] : tasks_) {
    ApplyLease(t, now_ms);
    if (t.owner == owner && t.status == TaskStatus::kWorking) ++n;
  }
  return n;
}

size_t MemoryTaskStore::Sweep(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t before = tasks_.size();
  SweepLocked(now_ms);
  return before - tasks_.size();
}

}  // namespace airlock::tasks
