// The `mcpServers` section of airlock's config: which downstream MCP servers
// airlock connects to as a client (one "connector" each).
//
// The shape follows the convention MCP clients already use:
//
//   "mcpServers": {
//     "crm":  {"command": "npx", "args": ["-y", "crm-mcp"], "env": {"CRM_TOKEN": "..."},
//              "cwd": "/srv/crm", "stderr": "inherit"},
//     "docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
//   }
//
// plus airlock-specific optional keys per connector:
//   "trusted": bool            (default false) whether upstream readOnlyHint is believed
//   "read_only_tools": [names] admin pins: these tools are `read` whatever they claim
//   "timeout_ms": int          per-call timeout (default 30000)
//   "enabled": bool            (default true)
//   "type": "stdio" | "http" | "streamable-http"   optional, must match the keys given
//   "stderr": "inherit" | "discard"   stdio only: the server's stderr goes to airlock's
//                              stderr with a "[connector NAME] " prefix, or to /dev/null
//
// Connector names match [A-Za-z0-9_-]{1,32}: the dot separates connector and
// tool in qualified names ("crm.get_contact"). Unknown keys are errors, so a
// misspelt "read_only_tool" cannot silently widen or narrow anything.
//
// Secrets: env values and header values are kept only in ConnectorConfig;
// nothing in this module puts them into an error message.
#ifndef AIRLOCK_GATEWAY_CONNECTOR_CONFIG_H_
#define AIRLOCK_GATEWAY_CONNECTOR_CONFIG_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::gateway {

enum class TransportKind { kStdio, kHttp };
enum class StderrMode { kInherit, kDiscard };
// Which era of MCP to speak to the server: kAuto probes with
// server/discover and falls back to the legacy initialize handshake (the
// spec's backward-compatibility rule); the others speak one era only.
enum class ProtocolEra { kAuto, kLegacy, kModern };

inline constexpr uint64_t kDefaultCallTimeoutMs = 30000;
inline constexpr size_t kMaxConnectorNameLength = 32;

struct ConnectorConfig {
  std::string name;
  TransportKind transport = TransportKind::kStdio;

  // stdio
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // secret values
  std::string cwd;                         // empty: airlock's working directory
  StderrMode stderr_mode = StderrMode::kInherit;

  // Streamable HTTP
  std::string url;
  std::map<std::string, std::string> headers;  // secret values

  // airlock-specific
  bool trusted = false;
  std::set<std::string> read_only_tools;
  uint64_t timeout_ms = kDefaultCallTimeoutMs;
  bool enabled = true;
  ProtocolEra protocol = ProtocolEra::kAuto;
};

// True if `name` matches [A-Za-z0-9_-]{1,32}.
bool IsValidConnectorName(const std::string& name);

// Parses the value of the top-level "mcpServers" key. null (absent) gives an
// empty list. Errors name the path: "mcpServers.crm.args[1]: expected a string".
// The result is sorted by connector name.
StatusOr<std::vector<ConnectorConfig>> ParseMcpServers(const nlohmann::json& mcp_servers);

// Parses one connector's object; `name` is its key in mcpServers.
StatusOr<ConnectorConfig> ParseConnectorConfig(const std::string& name, const nlohmann::json& j);

// A log-safe description of where the connector points: "stdio: node" (the
// command's base name only, no args) or "http: https://host:port" (no path,
// query or userinfo, since those can carry tokens).
std::string RedactedTarget(const ConnectorConfig& config);

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_CONNECTOR_CONFIG_H_
