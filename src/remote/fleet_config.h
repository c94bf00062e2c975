// The gateway's runner fleet from the configuration's "runner" section
// (config.h RunnerConfig): addresses, health timing, capacity per host, and
// the mutual-TLS files, read now so a bad path fails `airlock serve` at
// start rather than at the first run.
#ifndef AIRLOCK_REMOTE_FLEET_CONFIG_H_
#define AIRLOCK_REMOTE_FLEET_CONFIG_H_

#include "base/status.h"
#include "config/config.h"
#include "remote/runner_fleet.h"

namespace airlock::remote {

StatusOr<FleetOptions> FleetOptionsFromConfig(const config::Config& config);

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_FLEET_CONFIG_H_
