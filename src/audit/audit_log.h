// What the server writes the audit log through: an AuditStore plus the
// fail-closed policy (config "audit": {enabled, path, fail_closed}; the
// store is state.backend's, state/state_stores.h).
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto log, AuditLog::Open(config));   // disabled: a no-op log
//   const std::string run_id = NewRunId();
//   AIRLOCK_RETURN_IF_ERROR(log->BeginRun(run_id, caller_user, {{"kind", "inline"}}));  // refuse if !ok
//   ... run ...
//   Status st = log->EndRun(run_record, call_rows);  // !ok only when fail_closed: withhold the result
//   log->Event({.kind = "approve", .actor = "alice", .target = "ct_..."});
//
// With fail_closed (the default) every method returns the store's error, and
// callers refuse or withhold what they were doing with E_AUDIT_UNAVAILABLE.
// Without it, write errors are reported on stderr at most once per minute
// and the methods return OK; a store that cannot even be opened gives a
// degraded log (enabled() false, degraded() true) that writes nothing. A
// disabled log writes nothing. All methods are thread-safe.
#ifndef AIRLOCK_AUDIT_AUDIT_LOG_H_
#define AIRLOCK_AUDIT_AUDIT_LOG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "audit/audit_store.h"
#include "base/status.h"
#include "config/config.h"

namespace airlock::audit {

class AuditLog {
 public:
  // From config.audit and config.state: opens the configured store
  // (state::OpenAuditStore: SqliteAuditStore at config.AuditDbPath(),
  // creating the directory with mode 0700, or PgAuditStore) when enabled.
  // An unopenable store is an error when fail_closed, else a degraded log
  // that writes nothing.
  static StatusOr<std::unique_ptr<AuditLog>> Open(const config::Config& config);

  // `store` null: disabled.
  AuditLog(std::unique_ptr<AuditStore> store, bool fail_closed);

  // True if rows are being written.
  bool enabled() const { return store_ != nullptr; }
  bool fail_closed() const { return fail_closed_; }
  // True if the config enables the log but its store could not be opened
  // (fail_closed false): nothing is recorded.
  bool degraded() const { return degraded_; }

  // Appends an EventRow {kind "run_start", actor, target run_id, detail} so
  // that a run is on record before it starts (and a crash leaves a trace).
  Status BeginRun(const std::string& run_id, const std::string& actor, const nlohmann::json& detail);
  // Appends every call row, then the run record, as one write where the store
  // supports it (AuditStore::AppendRunWithCalls; SQLite: one transaction).
  Status EndRun(const RunRecord& run, const std::vector<CallRow>& calls);
  Status Event(const EventRow& event);  // `at` 0: now
  // One call row on its own (a direct gateway-mode tool call).
  Status Call(const CallRow& call);

  AuditStore* store() { return store_.get(); }  // null when disabled

  // Watches what goes through the log, written or not (metrics): every
  // write attempt with its outcome ("run", "event", "call"), and every
  // bridged call of a run or a direct call. Set before the log is shared;
  // called on the writing thread, so it must be quick.
  struct Observer {
    std::function<void(const char* what, bool ok)> on_write;
    std::function<void(const CallRow& call)> on_call;
  };
  void SetObserver(Observer observer) { observer_ = std::move(observer); }

 private:
  // `st` itself when fail_closed; else OK, after a rate-limited warning.
  Status Check(Status st);
  Status Observed(const char* what, Status st);

  Observer observer_;
  std::unique_ptr<AuditStore> store_;
  const bool fail_closed_;
  bool degraded_ = false;
  std::mutex mu_;                // guards the two warning fields
  int64_t last_warning_ms_ = 0;  // steady clock; 0: never warned
  int64_t suppressed_ = 0;       // errors not reported since the last warning
};

// "r_" + 16 hex digits of randomness.
std::string NewRunId();
// Unix time in milliseconds.
int64_t NowMs();

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_AUDIT_LOG_H_
