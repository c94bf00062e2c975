// What `airlock serve` measures and reports to operators (issue 19,
// docs/deploy.md): the Prometheus families and scrape-time collectors over
// the server's parts, and the readiness rule behind /readyz.
//
//   ServeMetrics m(runner_client);                 // before the servers
//   audit_log->SetObserver(m.AuditObserver());
//   m.Watch({.runs = &tracker, .sessions = registry, .gateway = gw});
//   http_options.metrics = [&m] { return m.registry().Render(); };
//   http_options.ready = [&m] { return m.Ready(); };
#ifndef AIRLOCK_CLI_SERVE_METRICS_H_
#define AIRLOCK_CLI_SERVE_METRICS_H_

#include <atomic>

#include "audit/audit_log.h"
#include "gateway/gateway.h"
#include "mcp/run_tracker.h"
#include "metrics/metered_executor.h"
#include "metrics/metrics.h"
#include "runner/runner_backend.h"
#include "sessions/session_registry.h"

namespace airlock::cli {

class ServeMetrics {
 public:
  explicit ServeMetrics(runner::RunnerBackend& runner);

  // The executor the servers should use: the runner, counted and timed.
  runtimes::CodeExecutor& executor() { return metered_; }
  metrics::Registry& registry() { return registry_; }

  // Counts audit writes (by kind and result) and bridged calls (by
  // connector and decision, with their latency).
  audit::AuditLog::Observer AuditObserver();

  struct Parts {
    mcp::RunTracker* runs = nullptr;
    sessions::SessionRegistry* sessions = nullptr;  // may be null
    gateway::Gateway* gateway = nullptr;
  };
  // Scrape-time gauges: runner up/restarts/in flight/queued, pool, sessions,
  // calls in flight, connectors up, process RSS and start time.
  void Watch(Parts parts);

  // /readyz: the runner answers, the last audit write (if any) succeeded,
  // and the warm pool (if any) has settled or has a jail ready.
  bool Ready();

 private:
  runner::RunnerBackend& runner_;
  metrics::Registry registry_;
  metrics::MeteredExecutor metered_;
  metrics::Family& audit_writes_;
  metrics::Family& bridged_calls_;
  metrics::Family& bridged_seconds_;
  std::atomic<bool> last_audit_write_ok_{true};
};

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_SERVE_METRICS_H_
