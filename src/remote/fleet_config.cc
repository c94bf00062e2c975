#include "remote/fleet_config.h"

namespace airlock::remote {

StatusOr<FleetOptions> FleetOptionsFromConfig(const config::Config& config) {
  const config::RunnerConfig& r = config.runner;
  if (!r.remote()) return InvalidArgument("no runner hosts are configured (runner.hosts, runner.dns)");
  FleetOptions o;
  o.hosts = r.hosts;
  o.dns = r.dns;
  o.dns_refresh = std::chrono::seconds(r.dns_refresh_s);
  AIRLOCK_ASSIGN_OR_RETURN(o.tls, ReadTlsFiles(r.tls.ca_file, r.tls.cert_file, r.tls.key_file));
  o.server_name = r.tls.server_name;
  o.health_interval = std::chrono::milliseconds(r.health_interval_ms);
  o.health_timeout = std::chrono::milliseconds(r.health_timeout_ms);
  o.connect_timeout = std::chrono::milliseconds(r.connect_timeout_ms);
  o.max_concurrent_per_host = r.max_concurrent_per_host > 0 ? r.max_concurrent_per_host
                                                            : static_cast<size_t>(config.ResolvedMaxConcurrentRuns());
  o.max_queue_per_host = static_cast<size_t>(config.server.max_queued_runs);
  return o;
}

}  // namespace airlock::remote
