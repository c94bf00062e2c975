// `airlock config check --config FILE`: validates a configuration the way
// `airlock serve` and `airlock runner-host` read it (schema, policy, code
// mode, connectors) without starting anything or reading the files it names
// (TLS keys, DSN files: they exist where it will run, not where it is
// checked). Deployments check their ConfigMaps with it
// (tests/deploy/manifests_test.py).
#include <iostream>

#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "codemode/settings.h"
#include "gateway/connector_config.h"
#include "governance/policy.h"

namespace airlock::cli {
namespace {

Status CheckConfig(const std::string& path) {
  AIRLOCK_ASSIGN_OR_RETURN(config::Config cfg, LoadConfigOrDefault(path));
  AIRLOCK_RETURN_IF_ERROR(governance::Policy::FromJson(cfg.roles, cfg.endpoints, cfg.access).status());
  AIRLOCK_RETURN_IF_ERROR(codemode::SettingsFromJson(cfg.code_mode).status());
  AIRLOCK_RETURN_IF_ERROR(gateway::ParseMcpServers(cfg.mcp_servers).status());
  return OkStatus();
}

}  // namespace

Subcommand AddConfigCommand(CLI::App& parent) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = parent.add_subcommand("config", "Check a configuration file");
  CLI::App* check = cmd->add_subcommand("check", "Validate a configuration without starting anything");
  check->add_option("--config", *path, "Configuration file (JSON)")->required();
  cmd->require_subcommand(1);
  return {cmd, [path] {
            Status st = CheckConfig(*path);
            if (!st.ok()) {
              std::cerr << "airlock config check: " << st.message() << "\n";
              return 2;
            }
            std::cout << "ok: " << *path << "\n";
            return 0;
          }};
}

}  // namespace airlock::cli
