// Who may see and do what (issue 5, research codemode.md §7 G1-G4): roles,
// named endpoints, and the identity of a caller.
//
// Config (docs/governance.md is the operator's reference):
//
//   "roles": {
//     "reader":  {"connectors": ["*"], "tools": ["*"]},                  // built in (read-only)
//     "dev":     {"connectors": ["crm", "docs"], "tools": ["crm.*", "docs.search*"],
//                 "inline": true, "propose": true, "write": ["crm"]},
//     "admin":   {"admin": true}                                          // built in
//   },
//   "endpoints": {
//     "team": {"path": "/mcp", "connectors": ["*"], "code_mode": "inline",
//              "gateway": false, "run_code": true, "isolation": ["native", "wasm"]}
//   },
//   "access": {"stdio": {"user": "", "role": "reader"}, "token_role": "reader",
//              "anonymous_role": "reader"}
//
// Role fields (all optional): connectors (names or "*"; default ["*"]),
// tools (patterns over "connector.tool" where "*" matches any run of bytes;
// default ["*"]), code_tools (patterns over code tool names; default ["*"]),
// inline (may run `execute`; default true), propose (may propose code tools;
// default = inline), write (connectors whose write tools the role may call,
// or "*"; default []), admin (default false; an admin sees and may do
// everything, writes included, and may approve code tools).
// Built-in roles "reader" and "admin" exist unless the config defines them.
// Names are compared as exact bytes: no case folding, no normalization (G-D4).
//
// Endpoint fields: path (HTTP path, "/" + [A-Za-z0-9/_-]; unique), connectors
// (default ["*"]), code_mode ("off" | "tools" | "inline"; default "inline"),
// gateway (expose each visible connector tool directly as an MCP tool named
// "connector.tool"; default false), run_code (offer run_code/list_languages;
// default true), isolation (the tiers run_code may use, a non-empty subset of
// ["native", "wasm"]; default both). Without "endpoints" there is one,
// "default" at /mcp.
//
// Identity: HTTP callers are who their API key says (auth::KeyStore), the
// static bearer token is user "token" with access.token_role, and an HTTP
// server with no authentication at all (loopback only) treats callers as
// "anonymous" with access.anonymous_role. Stdio: access.stdio.user (default:
// the OS user name) with access.stdio.role (default "reader").
// A role name that is not defined gives a caller that sees nothing.
#ifndef AIRLOCK_GOVERNANCE_POLICY_H_
#define AIRLOCK_GOVERNANCE_POLICY_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::governance {

// Who is calling, fixed for the life of an MCP session.
struct Caller {
  // "alice", "token", the stdio user; over HTTP without any authentication
  // "anonymous:<tag>", one per MCP session (tag: 16 hex digits of the
  // SHA-256 of its Mcp-Session-Id), so anonymous clients never share.
  std::string user{};
  std::string role{};         // a role name (may be undefined: then nothing is visible)
  std::string auth{};         // "api_key" | "token" | "none" | "stdio" | "cli"
  std::string key_id{};       // the API key's id, "" otherwise
  std::string endpoint{};     // the endpoint's name
  std::string client{};       // MCP clientInfo "name/version" (set at initialize)

  // The caller's identity: the one key for what it owns and what per-caller
  // limits count against (code sessions, runs in flight): "api_key:alice",
  // "token:token", "stdio:root", "none:anonymous:<tag>". Every API key of
  // one user is one identity; every anonymous MCP session is its own.
  std::string identity() const { return auth + ":" + user; }
};

// "*" matches any run of bytes (including none); everything else is literal.
bool GlobMatch(std::string_view pattern, std::string_view text);

struct Role {
  std::string name;
  std::vector<std::string> connectors = {"*"};
  std::vector<std::string> tools = {"*"};
  std::vector<std::string> code_tools = {"*"};
  bool inline_code = true;
  bool propose = true;
  std::vector<std::string> write;  // connector names or "*"
  bool admin = false;

  bool SeesConnector(const std::string& connector) const;
  // `qualified` is "connector.tool"; also requires SeesConnector.
  bool SeesTool(const std::string& connector, const std::string& qualified) const;
  bool SeesCodeTool(const std::string& name) const;
  bool MayWrite(const std::string& connector) const;
};

enum class CodeMode { kOff, kTools, kInline };
const char* CodeModeName(CodeMode m);

struct Endpoint {
  std::string name;
  std::string path = "/mcp";
  std::vector<std::string> connectors = {"*"};
  CodeMode code_mode = CodeMode::kInline;
  bool gateway = false;
  bool run_code = true;
  // The isolation tiers run_code may use here ("native", "wasm"). ["wasm"]
  // confines every run on this endpoint to the WASM tier: languages without
  // it are not offered and a request for "native" is refused.
  std::vector<std::string> isolation = {"native", "wasm"};
  // Whether open_session and session calls are offered here (also needs
  // run_code and the config's sessions.enabled).
  bool sessions = true;
  // The operator package directories (config languages.packages) bound into
  // this endpoint's native runs, by name; "*": every one configured.
  std::vector<std::string> packages = {"*"};

  bool HasConnector(const std::string& connector) const;
};

struct StdioAccess {
  std::string user;  // "" in the config: the OS user name (resolved by PolicyFromConfig)
  std::string role = "reader";
};

class Policy {
 public:
  // From the config's "roles", "endpoints" and "access" values (each may be
  // null). Errors name the key ("roles.dev.write[0]: expected a string").
  static StatusOr<Policy> FromJson(const nlohmann::json& roles, const nlohmann::json& endpoints,
                                   const nlohmann::json& access);

  // nullptr if undefined.
  const Role* FindRole(const std::string& name) const;
  const Endpoint* FindEndpoint(const std::string& name) const;
  // Every role name, sorted.
  std::vector<std::string> role_names() const;
  const std::vector<Endpoint>& endpoints() const { return endpoints_; }
  // The endpoint stdio serves when none is named: "default" if it exists,
  // else the only one; nullptr if ambiguous.
  const Endpoint* DefaultEndpoint() const;
  // The endpoints' names for a message: "gw, team" (in endpoints() order).
  std::string EndpointNames() const;

  const StdioAccess& stdio() const { return stdio_; }
  const std::string& token_role() const { return token_role_; }
  const std::string& anonymous_role() const { return anonymous_role_; }

  // Convenience checks for a caller (false for an undefined role).
  bool IsAdmin(const Caller& c) const;
  // The caller sees `connector` on `endpoint`: endpoint has it and role sees it.
  bool SeesConnector(const Caller& c, const Endpoint& e, const std::string& connector) const;
  bool SeesTool(const Caller& c, const Endpoint& e, const std::string& connector, const std::string& qualified) const;
  bool MayWrite(const Caller& c, const std::string& connector) const;

 private:
  std::map<std::string, Role> roles_;
  std::vector<Endpoint> endpoints_;
  StdioAccess stdio_;
  std::string token_role_ = "reader";
  std::string anonymous_role_ = "reader";
};

}  // namespace airlock::governance

#endif  // AIRLOCK_GOVERNANCE_POLICY_H_
