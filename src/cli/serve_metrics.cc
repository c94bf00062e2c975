#include "cli/serve_metrics.h"

#include <unistd.h>

#include <fstream>

namespace airlock::cli {

using nlohmann::json;

namespace {

// Resident set size of this process in bytes (0 if unknown).
double ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

double Number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

}  // namespace

ServeMetrics::ServeMetrics(runner::RunnerBackend& runner)
    : runner_(runner),
      metered_(runner, registry_),
      audit_writes_(registry_.Counter("airlock_audit_writes_total", "Audit log writes by kind (run, event, call) and result",
                                      {"kind", "result"})),
      bridged_calls_(registry_.Counter("airlock_bridged_calls_total",
                                       "Calls programs made through the tools bridge (and gateway calls), by connector and decision",
                                       {"connector", "decision"})),
      bridged_seconds_(registry_.Histogram("airlock_bridged_call_seconds",
                                           "Latency of allowed bridged calls by connector", {"connector"})) {
  const double started = static_cast<double>(time(nullptr));
  registry_.AddCollector([started](metrics::Exposition& e) {
    e.Gauge("airlock_process_resident_memory_bytes", "Resident memory of the airlock serve process", {},
            ResidentBytes());
    e.Gauge("airlock_process_start_time_seconds", "When airlock serve started (Unix time)", {}, started);
  });
}

audit::AuditLog::Observer ServeMetrics::AuditObserver() {
  return {.on_write =
              [this](const char* what, bool ok) {
                audit_writes_.Add({what, ok ? "ok" : "error"});
                last_audit_write_ok_.store(ok);
              },
          .on_call =
              [this](const audit::CallRow& c) {
                bridged_calls_.Add({c.connector, c.decision});
                if (c.decision == "allowed") bridged_seconds_.Observe({c.connector}, c.duration_ms / 1e3);
              }};
}

void ServeMetrics::Watch(Parts parts) {
  registry_.AddCollector([this, parts](metrics::Exposition& e) {
    const json h = runner_.Health();
    e.Gauge("airlock_runner_up", "1 while the code runner process answers", {}, h.value("up", false) ? 1 : 0);
    e.Counter("airlock_runner_restarts_total", "Times the code runner process was restarted", {},
              Number(h, "restarts"));
    e.Gauge("airlock_runs_in_flight", "Runs the runner is executing", {}, Number(h, "in_flight"));
    e.Gauge("airlock_runs_queued", "Runs waiting for a runner slot", {}, Number(h, "queued"));
    // Scale-out (remote/runner_fleet.h): one series per runner host.
    if (auto hosts = h.find("hosts"); hosts != h.end() && hosts->is_array()) {
      for (const json& host : *hosts) {
        const std::string address = host.value("address", std::string());
        e.Gauge("airlock_runner_host_up", "1 while the runner host is connected and answers health checks",
                {{"host", address}}, host.value("up", false) ? 1 : 0);
        e.Gauge("airlock_runner_host_runs_in_flight", "Runs in flight on the runner host", {{"host", address}},
                Number(host, "in_flight"));
        e.Counter("airlock_runner_host_runs_total", "Runs and session cells placed on the runner host",
                  {{"host", address}}, Number(host, "runs"));
      }
    }
    if (auto pool = h.find("pool"); pool != h.end() && pool->is_object()) {
      e.Gauge("airlock_pool_ready", "Pre-made jails ready to hand out", {}, Number(*pool, "ready"));
      e.Gauge("airlock_pool_pending", "Jails being made or still wanted by the pool", {}, Number(*pool, "pending"));
      e.Counter("airlock_pool_hits_total", "Runs that took a ready jail", {}, Number(*pool, "hits"));
      e.Counter("airlock_pool_misses_total", "Runs that found no ready jail", {}, Number(*pool, "misses"));
      e.Counter("airlock_pool_discards_total", "Ready jails found unusable and discarded", {},
                Number(*pool, "discarded"));
      e.Counter("airlock_pool_create_failures_total", "Jails the pool failed to make", {},
                Number(*pool, "create_failures"));
      if (auto shapes = pool->find("shapes"); shapes != pool->end() && shapes->is_array()) {
        for (const json& sh : *shapes) {
          const std::vector<std::pair<std::string, std::string>> label = {{"shape", sh.value("shape", "")}};
          e.Gauge("airlock_pool_shape_ready", "Ready jails per pool shape (language/tier/limits)", label,
                  Number(sh, "ready"));
          e.Counter("airlock_pool_shape_hits_total", "Pool hits per shape", label, Number(sh, "hits"));
          e.Counter("airlock_pool_shape_misses_total", "Pool misses per shape", label, Number(sh, "misses"));
          e.Counter("airlock_pool_shape_discards_total", "Pool discards per shape", label, Number(sh, "discarded"));
        }
      }
    }
    if (parts.sessions != nullptr) {
      e.Gauge("airlock_sessions_open", "Stateful sessions open", {}, static_cast<double>(parts.sessions->open_count()));
    }
    if (parts.runs != nullptr) {
      e.Gauge("airlock_tool_calls_in_flight", "MCP tool calls in flight on every endpoint", {},
              static_cast<double>(parts.runs->List().size()));
    }
    if (parts.gateway != nullptr) {
      for (const std::string& name : parts.gateway->connector_names()) {
        const gateway::Connector* c = parts.gateway->connector(name);
        if (c == nullptr) continue;
        const json ch = c->Health();
        e.Gauge("airlock_connector_up", "1 while the downstream MCP server is connected", {{"connector", name}},
                ch.value("connected", false) ? 1 : 0);
        e.Counter("airlock_connector_connects_total", "Successful connections to the downstream server",
                  {{"connector", name}}, Number(ch, "connects"));
      }
    }
  });
}

bool ServeMetrics::Ready() {
  const json h = runner_.Health();
  if (!h.value("up", false) || !last_audit_write_ok_.load()) return false;
  auto pool = h.find("pool");
  if (pool == h.end() || !pool->is_object()) return true;
  return Number(*pool, "pending") == 0 || Number(*pool, "ready") > 0;
}

}  // namespace airlock::cli
