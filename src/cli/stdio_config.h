// The ready-to-paste stdio client configuration that `airlock serve --http`
// prints for MCP clients that launch servers themselves (Claude Desktop,
// Cursor, ...): the same binary and the same settings as the running server,
// with every path made absolute (the client starts it from its own cwd).
//
//   nlohmann::json c = StdioClientConfig({.executable = SelfExecutablePath(),
//                                         .config_path = "airlock.json"});
//   // {"mcpServers": {"airlock": {"command": "/opt/airlock/airlock",
//   //   "args": ["serve", "--config", "/home/me/airlock.json"]}}}
#ifndef AIRLOCK_CLI_STDIO_CONFIG_H_
#define AIRLOCK_CLI_STDIO_CONFIG_H_

#include <string>

#include <nlohmann/json.hpp>

namespace airlock::cli {

struct StdioConfigInputs {
  std::string executable;   // the airlock binary
  std::string config_path;  // --config ("" if none)
  std::string state_dir;    // --state-dir ("" if none)
  std::string endpoint;     // --endpoint: which endpoint stdio serves ("" for the default)
  bool allow_degraded = false;
};

// {"mcpServers": {"airlock": {"command", "args": ["serve", ...]}}}.
nlohmann::json StdioClientConfig(const StdioConfigInputs& in);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_STDIO_CONFIG_H_
