#include "mcp/task_manager.h"

#include <algorithm>
#include <chrono>

#include "base/encoding.h"
#include "base/random.h"
#include "base/time_format.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using tasks::TaskRecord;
using tasks::TaskStatus;

// How often a gateway looks in the store for a cancel requested through
// another gateway.
constexpr auto kCancelCheckInterval = std::chrono::seconds(1);

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A non-negative integer argument, or nullopt.
std::optional<uint64_t> UintArg(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer() && it->get<int64_t>() >= 0) return static_cast<uint64_t>(it->get<int64_t>());
  if (it->is_number_float() && it->get<double>() >= 0) return static_cast<uint64_t>(it->get<double>());
  return std::nullopt;
}

// A random name for this manager's leases (no randomness: a fixed one;
// leases are only compared within one store).
std::string InstanceSuffix() {
  StatusOr<std::string> hex = RandomHex(8);
  return hex.ok() ? *hex : std::string("0");
}

}  // namespace

bool DeclaresTasksExtension(const json& client_capabilities) {
  if (!client_capabilities.is_object()) return false;
  auto ext = client_capabilities.find("extensions");
  return ext != client_capabilities.end() && ext->is_object() && ext->contains(kTasksExtension) &&
         (*ext)[kTasksExtension].is_object();
}

// One task's run in flight.
struct TaskManager::Live {
  std::string task_id;
  std::string run_id;
  governance::Caller caller;
  std::string protocol_version;
  CancelToken cancel;
  bool cancel_requested = false;  // by tasks/cancel; guarded by TaskManager::mu_
};

// What the tool sees of its task: no progress or log notifications (nobody
// is listening), the task's cancel token and the task timeout cap.
class TaskManager::Context : public ToolCallContext {
 public:
  Context(Live& live, uint64_t max_timeout_ms) : live_(live), max_timeout_ms_(max_timeout_ms) {}
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(LogLevel, const std::string&) override {}
  CancelToken& cancel() override { return live_.cancel; }
  const std::string& protocol_version() const override { return live_.protocol_version; }
  const governance::Caller& caller() const override { return live_.caller; }
  const std::string& run_id() const override { return live_.run_id; }
  uint64_t task_max_timeout_ms() const override { return max_timeout_ms_; }

 private:
  Live& live_;
  const uint64_t max_timeout_ms_;
};

TaskManager::TaskManager(const config::TasksConfig& config, uint64_t blocking_max_timeout_ms,
                         uint64_t default_timeout_ms, WorkerPool& pool, RunTracker& runs, audit::AuditLog* audit,
                         std::shared_ptr<tasks::TaskStore> store, Clock now)
    : config_(config),
      blocking_max_timeout_ms_(blocking_max_timeout_ms),
      default_timeout_ms_(default_timeout_ms),
      pool_(pool),
      runs_(runs),
      audit_(audit),
      store_(std::move(store)),
      now_(now ? std::move(now) : Clock(SystemNowMs)),
      instance_("gw_" + InstanceSuffix()),
      renewer_([this] { RenewLoop(); }) {}

TaskManager::~TaskManager() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  renew_cv_.notify_all();
  renewer_.join();
  std::unique_lock<std::mutex> lock(mu_);
  for (auto& [id, live] : live_) live->cancel.Cancel();
  idle_.wait(lock, [this] { return live_.empty(); });
}

bool TaskManager::Wants(const std::string& tool, const json& arguments) const {
  if (!enabled() || (tool != "run_code" && tool != "execute")) return false;
  if (config_.mode == "always") return true;
  std::optional<uint64_t> timeout;
  if (tool == "run_code") {
    timeout = UintArg(arguments, "timeout_ms");
    if (!timeout) timeout = default_timeout_ms_;
  } else if (arguments.is_object() && arguments.contains("limits")) {
    timeout = UintArg(arguments["limits"], "wall_ms");
  }
  return timeout && (*timeout >= config_.min_timeout_ms || *timeout > blocking_max_timeout_ms_);
}

StatusOr<json> TaskManager::Start(std::shared_ptr<Tool> tool, json arguments, const governance::Caller& caller,
                                  const std::string& run_id, const std::string& protocol_version) {
  StatusOr<std::string> id = tasks::NewTaskId();
  if (!id.ok()) return id.status();
  const int64_t now = now_();
  TaskRecord t;
  t.id = *id;
  t.owner = caller.identity();
  t.tool = tool->name();
  t.run_id = run_id;
  t.created_ms = t.updated_ms = now;
  t.ttl_ms = static_cast<int64_t>(config_.ttl_s) * 1000;
  t.lease_owner = instance_;
  t.lease_expires_ms = now + static_cast<int64_t>(config_.lease_s) * 1000;
  t.status_message = "The run is in progress.";
  AIRLOCK_RETURN_IF_ERROR(store_->Create(t, config_.max_per_caller, now));

  auto live = std::make_shared<Live>();
  live->task_id = t.id;
  live->run_id = run_id;
  live->caller = caller;
  live->protocol_version = protocol_version;
  {
    std::lock_guard<std::mutex> lock(mu_);
    live_[t.id] = live;
  }
  auto forget = [&](const std::string& why) {
    (void)store_->Finish(t.id, TaskStatus::kFailed, nullptr, {{"code", -32603}, {"message", why}}, why, now_());
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(t.id);
    idle_.notify_all();
  };
  if (audit_ != nullptr) {
    Status st = audit_->Event({.kind = "task_create",
                               .actor = caller.user,
                               .target = t.id,
                               .detail = {{"run_id", run_id},
                                          {"tool", t.tool},
                                          {"auth", caller.auth},
                                          {"key_id", caller.key_id},
                                          {"ttl_ms", t.ttl_ms}}});
    if (!st.ok()) {
      forget("the audit log cannot be written");
      return Internal("E_AUDIT_UNAVAILABLE: the audit log cannot be written (" + st.message() + ")");
    }
  }
  bool submitted =
      pool_.TrySubmit([this, live, tool, arguments = std::move(arguments)] { Run(live, *tool, arguments); });
  if (!submitted) {
    forget("server busy");
    return Unavailable("Server busy: too many calls in progress; retry later.");
  }
  json out = Describe(t);
  return out;
}

void TaskManager::Run(const std::shared_ptr<Live>& live, Tool& tool, const json& arguments) {
  Context ctx(*live, config_.max_timeout_ms);
  StatusOr<json> result = Internal("the run did not start");
  {
    // Visible (and cancellable) to operators while it runs; ended before the
    // task turns terminal, so a finished task has no run left.
    RunTracker::Handle tracked = runs_.Begin(live->run_id, live->caller, tool.name(), &live->cancel);
    result = tool.Call(arguments, ctx);
    tracked.SetOutcome(result.ok() ? OutcomeOfToolResult(*result)
                                   : CallOutcome{.status = "protocol_error",
                                                 .error_code = result.status().code() == StatusCode::kInvalidArgument
                                                                   ? "invalid_params"
                                                                   : "internal_error"});
  }
  bool cancel_requested;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_requested = live->cancel_requested;
  }
  const int64_t now = now_();
  if (cancel_requested) {
    (void)store_->Finish(live->task_id, TaskStatus::kCancelled, nullptr, nullptr, "Cancelled by tasks/cancel.", now);
  } else if (live->cancel.cancelled()) {
    // An operator (airlock runs / the console, through the RunTracker) or
    // the server's shutdown stopped it.
    (void)store_->Finish(live->task_id, TaskStatus::kCancelled, nullptr, nullptr,
                         "Cancelled by the server (an operator, or airlock shutting down).", now);
  } else if (result.ok()) {
    (void)store_->Finish(live->task_id, TaskStatus::kCompleted, *result, nullptr, "The run finished.", now);
  } else if (result.status().code() == StatusCode::kInvalidArgument) {
    // SEP-1303 (2025-11-25 on): input validation errors are tool errors.
    (void)store_->Finish(live->task_id, TaskStatus::kCompleted,
                         ToolErrorResult("Invalid arguments: " + result.status().message()), nullptr,
                         "The run finished.", now);
  } else {
    const std::string message = result.status().message();
    (void)store_->Finish(live->task_id, TaskStatus::kFailed, nullptr, {{"code", -32603}, {"message", message}},
                         message, now);
  }
  std::lock_guard<std::mutex> lock(mu_);
  live_.erase(live->task_id);
  idle_.notify_all();
}

json TaskManager::Describe(const TaskRecord& t) const {
  json out = {{"taskId", t.id},
              {"status", tasks::TaskStatusName(t.status)},
              {"createdAt", IsoUtc(t.created_ms, true)},
              {"lastUpdatedAt", IsoUtc(t.updated_ms, true)},
              {"ttlMs", t.ttl_ms},
              {"pollIntervalMs", config_.poll_interval_ms}};
  if (!t.status_message.empty()) out["statusMessage"] = t.status_message;
  if (t.status == TaskStatus::kCompleted) out["result"] = t.result.is_object() ? t.result : json::object();
  if (t.status == TaskStatus::kFailed) out["error"] = t.error.is_object() ? t.error : tasks::LeaseExpiredError();
  return out;
}

StatusOr<json> TaskManager::Get(const std::string& task_id, const governance::Caller& caller) {
  StatusOr<TaskRecord> t = store_->Get(task_id, caller.identity(), now_());
  if (!t.ok()) return t.status();
  return Describe(*t);
}

Status TaskManager::Cancel(const std::string& task_id, const governance::Caller& caller) {
  StatusOr<TaskRecord> t = store_->Get(task_id, caller.identity(), now_());
  if (!t.ok()) return t.status();
  if (tasks::IsTerminal(t->status)) return OkStatus();  // cooperative: nothing left to stop
  Audit("task_cancel", caller, task_id, {{"run_id", t->run_id}, {"tool", t->tool}});
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(task_id);
    if (it != live_.end()) {
      it->second->cancel_requested = true;
      it->second->cancel.Cancel();
      return OkStatus();
    }
  }
  // Not running here: another gateway's (or ending right now). The mark in
  // the store reaches the gateway running it.
  Status marked = store_->RequestCancel(task_id, caller.identity(), now_());
  return marked.code() == StatusCode::kNotFound ? OkStatus() : marked;
}

void TaskManager::RenewLoop() {
  const auto renew_every = std::chrono::milliseconds(config_.lease_s * 1000 / 3);
  auto next_renew = std::chrono::steady_clock::now() + renew_every;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    renew_cv_.wait_for(lock, kCancelCheckInterval, [this] { return stopping_; });
    if (stopping_) break;
    std::vector<std::shared_ptr<Live>> running;
    for (const auto& [id, live] : live_) running.push_back(live);
    const bool renew = std::chrono::steady_clock::now() >= next_renew;
    if (renew) next_renew = std::chrono::steady_clock::now() + renew_every;
    lock.unlock();
    for (const std::shared_ptr<Live>& live : running) {
      const int64_t now = now_();
      if (renew) {
        Status kept = store_->RenewLease(live->task_id, instance_, now + static_cast<int64_t>(config_.lease_s) * 1000, now);
        if (kept.code() == StatusCode::kFailedPrecondition) live->cancel.Cancel();  // readers see it failed already
      }
      StatusOr<TaskRecord> t = store_->Get(live->task_id, live->caller.identity(), now);
      if (t.ok() && t->cancel_requested && !live->cancel.cancelled()) {
        {
          std::lock_guard<std::mutex> guard(mu_);
          live->cancel_requested = true;
        }
        live->cancel.Cancel();
      }
    }
    lock.lock();
  }
}

void TaskManager::Audit(const std::string& kind, const governance::Caller& caller, const std::string& task_id,
                        json detail) {
  if (audit_ == nullptr) return;
  detail["auth"] = caller.auth;
  detail["key_id"] = caller.key_id;
  (void)audit_->Event({.kind = kind, .actor = caller.user, .target = task_id, .detail = std::move(detail)});
}

size_t TaskManager::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

}  // namespace airlock::mcp
