// The server side of the MCP Tasks extension (io.modelcontextprotocol/tasks,
// docs/mcp.md "Tasks") for run_code and execute: decides which tools/call
// becomes a task (config "tasks"), records it in a tasks::TaskStore before
// the CreateTaskResult is sent, runs the tool on the server's worker pool,
// detached from the request that created it (the client may disconnect and
// come back with tasks/get), and answers tasks/get and tasks/cancel for the
// task's owner only.
//
//   TaskManager tasks(config.tasks, max_ms, default_ms, pool, runs, audit, std::make_shared<tasks::MemoryTaskStore>());
//   if (tasks.Wants("run_code", args)) result = tasks.Start(tool, args, caller, run_id, version);
//   StatusOr<json> t = tasks.Get(task_id, caller);   // NotFound: unknown or not the caller's
//
// A task's run goes through the tool like a blocking call (same per-caller
// run limits, same audit rows, same RunTracker entry, so an operator can
// cancel it too), with no progress or log notifications (the extension
// sends none for tasks) and with tasks.max_timeout_ms as its timeout cap.
#ifndef AIRLOCK_MCP_TASK_MANAGER_H_
#define AIRLOCK_MCP_TASK_MANAGER_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "base/status.h"
#include "config/config.h"
#include "governance/policy.h"
#include "mcp/run_tracker.h"
#include "mcp/tools/tool.h"
#include "mcp/worker_pool.h"
#include "tasks/task_store.h"

namespace airlock::mcp {

// The extension's identifier, in clientCapabilities.extensions and in
// server/discover's capabilities.extensions.
inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";

// True if a request's clientCapabilities declare the extension.
bool DeclaresTasksExtension(const nlohmann::json& client_capabilities);

class TaskManager {
 public:
  using Clock = std::function<int64_t()>;  // Unix ms

  // `pool`, `runs` and `audit` (may be null) must outlive the manager;
  // `now` defaults to the system clock.
  TaskManager(const config::TasksConfig& config, uint64_t blocking_max_timeout_ms, uint64_t default_timeout_ms,
              WorkerPool& pool, RunTracker& runs, audit::AuditLog* audit, std::shared_ptr<tasks::TaskStore> store,
              Clock now = nullptr);
  // Cancels every run still going and waits for them to end.
  ~TaskManager();
  TaskManager(const TaskManager&) = delete;
  TaskManager& operator=(const TaskManager&) = delete;

  bool enabled() const { return config_.mode != "never"; }

  // Whether a tools/call of `tool` with `arguments` becomes a task (the
  // client having declared the extension): run_code and execute only; mode
  // "always", or mode "long" and a timeout (run_code timeout_ms, else the
  // default; execute limits.wall_ms) of at least tasks.min_timeout_ms or
  // above the blocking maximum.
  bool Wants(const std::string& tool, const nlohmann::json& arguments) const;

  // Records the task (owned by `caller`), writes the "task_create" audit
  // event and starts the run; returns the CreateTaskResult's fields (taskId,
  // status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs).
  // ResourceExhausted: the caller holds tasks.max_per_caller working tasks;
  // Unavailable: no worker free; Internal: the audit log or randomness failed.
  StatusOr<nlohmann::json> Start(std::shared_ptr<Tool> tool, nlohmann::json arguments, const governance::Caller& caller,
                                 const std::string& run_id, const std::string& protocol_version);

  // The DetailedTask of `caller`'s task (result or error inlined when
  // terminal). NotFound for an unknown, expired or another caller's task.
  StatusOr<nlohmann::json> Get(const std::string& task_id, const governance::Caller& caller);

  // Asks the task's run to stop (its CancelToken: the jail is torn down as
  // for notifications/cancelled); it ends "cancelled". Audited
  // ("task_cancel"). A finished task is left as it is. NotFound as for Get.
  // A task another gateway runs (a shared store) is marked in the store;
  // that gateway sees the mark within a second (RenewLoop) and stops it.
  Status Cancel(const std::string& task_id, const governance::Caller& caller);

  // Runs still going (for tests and shutdown).
  size_t running() const;

 private:
  struct Live;
  class Context;

  void Run(const std::shared_ptr<Live>& live, Tool& tool, const nlohmann::json& arguments);
  // Until the manager is destroyed: every second, looks for a cancel
  // requested through another gateway; every third of tasks.lease_s,
  // renews the leases of the tasks running here. A lease that could not be
  // kept (it expired: readers already see the task failed) stops the run.
  void RenewLoop();
  nlohmann::json Describe(const tasks::TaskRecord& t) const;
  void Audit(const std::string& kind, const governance::Caller& caller, const std::string& task_id,
             nlohmann::json detail);

  const config::TasksConfig config_;
  const uint64_t blocking_max_timeout_ms_;
  const uint64_t default_timeout_ms_;
  WorkerPool& pool_;
  RunTracker& runs_;
  audit::AuditLog* const audit_;
  const std::shared_ptr<tasks::TaskStore> store_;
  const Clock now_;
  const std::string instance_;  // this manager's lease owner name

  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::map<std::string, std::shared_ptr<Live>> live_;  // key: task id
  bool stopping_ = false;
  std::condition_variable renew_cv_;
  std::thread renewer_;  // RenewLoop; last, so it starts after the rest
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TASK_MANAGER_H_
