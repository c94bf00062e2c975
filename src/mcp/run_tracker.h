// The tool calls in flight, across every endpoint: who runs what since when,
// and a way to cancel one by its run id. For the operators' console's live
// page (issue 18), metrics and a draining shutdown (issue 19).
//
//   RunTracker runs;
//   RunTracker::Handle h = runs.Begin(run_id, caller, "run_code", &call_cancel_token);
//   ... the call runs; h going out of scope ends it ...
//   for (const RunInFlight& r : runs.List()) ...
//   Status st = runs.Cancel("r_0123456789abcdef");   // fires the call's token
//
// The cancel token must outlive the handle. Thread-safe.
#ifndef AIRLOCK_MCP_RUN_TRACKER_H_
#define AIRLOCK_MCP_RUN_TRACKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "base/status.h"
#include "governance/policy.h"

namespace airlock::mcp {

struct RunInFlight {
  std::string run_id;
  std::string user, role, endpoint, client;
  std::string tool;
  int64_t started_ms = 0;  // Unix ms
  bool cancel_requested = false;
};

// {"run_id", "user", "role", "endpoint", "client", "tool", "started_ms", "cancel_requested"}.
nlohmann::json ToJson(const RunInFlight& r);

// How a tool call ended, for the request log (docs/deploy.md): `status` is
// the run's own status where the program ran (ok, exit_nonzero, timeout,
// memory_limit, output_limit, compile_error, killed_signal), else "ok",
// "error" or "protocol_error"; `error_code` says why for "error" (the tool's
// error code: E_SESSION_NOT_FOUND, runner_unavailable, E_LIMIT_WALLCLOCK,
// ..., or "internal_error"), and is empty otherwise.
struct CallOutcome {
  std::string status;
  std::string error_code{};
};
// The outcome of a tool result ({content, structuredContent?, isError?}).
CallOutcome OutcomeOfToolResult(const nlohmann::json& result);

class RunTracker {
 public:
  class Handle {
   public:
    Handle() = default;
    Handle(Handle&& other) noexcept : tracker_(other.tracker_), run_id_(std::move(other.run_id_)) {
      other.tracker_ = nullptr;
    }
    Handle& operator=(Handle&& other) noexcept;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { End(); }
    void End();
    // How the call ended (CallOutcome), for the end observer.
    void SetOutcome(CallOutcome outcome) { outcome_ = std::move(outcome); }

   private:
    friend class RunTracker;
    Handle(RunTracker* tracker, std::string run_id) : tracker_(tracker), run_id_(std::move(run_id)) {}
    RunTracker* tracker_ = nullptr;
    std::string run_id_;
    CallOutcome outcome_;
  };

  // Called (on the call's thread) as each call ends: its record, how long it
  // took, and the outcome its handle was given. For request logs. Set before
  // calls begin.
  using EndObserver = std::function<void(const RunInFlight& run, int64_t duration_ms, const CallOutcome& outcome)>;
  void SetEndObserver(EndObserver observer) { on_end_ = std::move(observer); }

  // Registers a call; `cancel` must outlive the returned handle.
  Handle Begin(const std::string& run_id, const governance::Caller& who, const std::string& tool,
               CancelToken* cancel);
  // Oldest first.
  std::vector<RunInFlight> List();
  // Fires the call's cancel token; NotFound when no such call is in flight.
  Status Cancel(const std::string& run_id);
  size_t size();

 private:
  struct Entry {
    RunInFlight info;
    CancelToken* cancel = nullptr;
  };
  void End(const std::string& run_id, const CallOutcome& outcome);
  EndObserver on_end_;

  std::mutex mu_;
  std::map<std::string, Entry> runs_;  // by run id
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_RUN_TRACKER_H_
