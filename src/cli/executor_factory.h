// Builds the jail host and the local executor from a configuration; shared
// by every subcommand that runs code in this process (run, runner, doctor,
// languages, selftest). `airlock serve` never calls this: it only talks to a
// runner process.
#ifndef AIRLOCK_CLI_EXECUTOR_FACTORY_H_
#define AIRLOCK_CLI_EXECUTOR_FACTORY_H_

#include <memory>
#include <string>

#include "config/config.h"
#include "jail/host.h"
#include "runtimes/local_executor.h"

namespace airlock::cli {

struct LocalRuntime {
  std::unique_ptr<jail::JailHost> host;
  std::unique_ptr<runtimes::LocalExecutor> executor;  // uses *host
};

// Loads `config_path` (empty: embedded defaults).
StatusOr<config::Config> LoadConfigOrDefault(const std::string& config_path);

// `pooled`: take jails from a pool per config.pool (the long-lived runner of
// `airlock serve`; a one-shot command gains nothing from one).
StatusOr<LocalRuntime> MakeLocalRuntime(const config::Config& config, bool allow_degraded, bool pooled = false);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_EXECUTOR_FACTORY_H_
