// The subcommands of the `airlock` binary. Each is a thin layer over a
// library module; the CLI holds no logic of its own beyond argument parsing
// and printing.
#ifndef AIRLOCK_CLI_COMMANDS_H_
#define AIRLOCK_CLI_COMMANDS_H_

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace airlock::cli {

struct RunOptions {
  std::string language;
  std::string stdin_file;
  std::vector<std::string> args;
  uint64_t timeout_ms = 0;
  uint64_t memory_mb = 0;
  std::vector<std::string> files;    // NAME=PATH
  std::vector<std::string> outputs;  // globs
  std::string output_dir = ".";
  bool json = false;
  bool allow_degraded = false;
  std::string isolation;  // "native" | "wasm"; empty: the config's languages.default_isolation
  std::string source;  // path or "-"
  std::string config_path;
  // Code mode: run the program with `tools` bridged to the config's
  // mcpServers, as the MCP tool `execute` does; prints its result as JSON.
  bool code_mode = false;
  std::vector<std::string> connectors;  // empty: all
};

struct ServeOptions {
  std::string config_path;
  std::string http;  // HOST:PORT; empty: stdio
  std::string token_file;
  std::string endpoint;   // stdio: which endpoint (default: "default" or the only one)
  std::string state_dir;  // overrides server.state_dir
  std::string metrics;    // HOST:PORT: /metrics on a listener of its own (also for stdio)
  std::string log_format = "text";  // "json": one JSON object per stderr line
  bool allow_degraded = false;
};

// `airlock keys create|list|revoke`: API keys (auth/key_store.h).
struct KeysOptions {
  std::string action;  // "create", "list", "revoke"
  std::string file;         // a key file; empty: the config's store (state/state_stores.h)
  std::string config_path;  // the key store (state.backend) and the audit log (key_create / key_revoke events)
  std::string actor;        // who did it (--as; default: the OS user name)
  std::string user, role, name, id;
  bool json = false;
};

// A subcommand that registers itself: `run` is called when `app` was given
// on the command line.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
// `airlock tools list|show|diff|approve|reject|revoke` (codetools/).
Subcommand AddToolsCommand(CLI::App& parent);
// `airlock audit [--since] [--user] [--run ID] [--json]`, `airlock audit verify`.
Subcommand AddAuditCommand(CLI::App& parent);
// `airlock config check --config FILE` (config_command.cc).
Subcommand AddConfigCommand(CLI::App& parent);
// `airlock runner-host --listen HOST:PORT ...`: jails for remote gateways (runner_host_command.cc).
Subcommand AddRunnerHostCommand(CLI::App& parent);
// `airlock live`: runs in flight on a running server, health, cancel (live_command.cc).
Subcommand AddLiveCommand(CLI::App& parent);

int RunCommand(const RunOptions& options);
int KeysCommand(const KeysOptions& options);
int DoctorCommand(bool json);
int LanguagesCommand(bool json);
int SelftestCommand(bool json);
int ServeCommand(const ServeOptions& options);
int RunnerCommand(int channel_fd, const std::string& config_path, bool allow_degraded);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_COMMANDS_H_
