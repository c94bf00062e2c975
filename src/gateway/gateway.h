// The gateway: every downstream MCP server airlock is configured with (its
// connectors), seen as one catalog of tools named "connector.tool".
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto gw, Gateway::Create(config.mcp_servers));
//   gw->ConnectAll(std::chrono::seconds(30));
//   SearchResult found = gw->Search("contact", 10, filter);
//   StatusOr<ToolDescription> d = gw->Describe("crm.get_contact", filter);
//   CallOutcome r = gw->CallTool("crm.get_contact", {{"id", 7}}, &cancel, 5s);
//   bridge_reply = r.ToBridgeReply(request_id);
//
// Names: "connector.tool", at most 64 bytes (longer ones are skipped with a
// warning), compared as exact bytes (no case folding). The connector is the
// part before the first dot; a tool's own name may contain dots.
//
// Effective class (research codemode.md §7 G2): a tool is `read` only if an
// admin pinned it (the connector's read_only_tools) or the connector is
// trusted AND the server says annotations.readOnlyHint === true; everything
// else, including a tool without annotations, is `write`. Annotations never
// widen what an admin configured.
//
// `filter` is the caller's visibility predicate (roles, declared connectors);
// the gateway itself makes no access decisions — callers must also check
// FindTool()/read_only before CallTool.
#ifndef AIRLOCK_GATEWAY_GATEWAY_H_
#define AIRLOCK_GATEWAY_GATEWAY_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "base/status.h"
#include "gateway/connector.h"
#include "gateway/connector_config.h"

namespace airlock::gateway {

inline constexpr size_t kMaxQualifiedNameBytes = 64;
inline constexpr int kMaxSearchLimit = 100;
inline constexpr int kDefaultSearchLimit = 10;

struct ToolEntry {
  std::string name;       // "connector.tool"
  std::string connector;  // "connector"
  std::string tool;       // "tool" (the downstream server's name)
  std::string title;
  std::string description;
  nlohmann::json input_schema;   // JSON Schema object
  nlohmann::json output_schema;  // null if none
  nlohmann::json annotations;    // upstream annotations, verbatim (null if none)
  bool read_only = false;        // effective class: true = read, false = write

  const char* effective_class() const { return read_only ? "read" : "write"; }
};

using ToolFilter = std::function<bool(const ToolEntry&)>;

struct SearchHit {
  std::string name;
  std::string summary;  // one line, <= 120 bytes
  bool read_only = false;
  double score = 0;
};

struct SearchResult {
  std::vector<SearchHit> tools;
  bool truncated = false;  // more tools matched than `limit`
  // {"tools": [{"name", "summary", "read_only"}], "truncated"} (the bridge's shape)
  nlohmann::json ToJson() const;
};

struct ToolDescription {
  std::string name;
  std::string description;
  nlohmann::json input_schema;
  nlohmann::json output_schema;  // null if none
  std::string signature;         // TypeScript-style
  bool read_only = false;
  // {"name", "description", "input_schema", "signature", "read_only"}
  nlohmann::json ToJson() const;
};

// Bridge error codes this module produces.
inline constexpr char kErrToolError[] = "E_TOOL_ERROR";
inline constexpr char kErrToolNotDeclared[] = "E_TOOL_NOT_DECLARED";
inline constexpr char kErrInvalidArgs[] = "E_INVALID_ARGS";
inline constexpr char kErrCancelled[] = "E_CANCELLED";

// The result of CallTool in the bridge contract's terms.
struct CallOutcome {
  bool ok = false;
  nlohmann::json value;       // ok: structuredContent, else parsed JSON text, else text
  std::string error_code;     // !ok: E_TOOL_ERROR (downstream isError, timeout, server down,
                              // protocol error), E_TOOL_NOT_DECLARED (no such tool),
                              // E_INVALID_ARGS (args not an object), E_CANCELLED
  std::string error_message;  // !ok: the tool's text, or what went wrong
  Status status;              // !ok: the underlying Status; OK when the tool reported isError
  // {"id", "ok": true, "result"} or {"id", "ok": false, "error": {"code", "message"}}
  nlohmann::json ToBridgeReply(const nlohmann::json& id) const;
};

// G2: read only if pinned, or trusted connector + readOnlyHint === true.
bool EffectiveReadOnly(const ConnectorConfig& config, const std::string& tool, const nlohmann::json& annotations);

// A CallToolResult -> the bridge's value. For isError results, sets
// *is_error and returns the error text as a string.
nlohmann::json NormalizeToolResult(const nlohmann::json& call_tool_result, bool* is_error);

// The bridge error code for a failed call's Status.
const char* BridgeErrorCode(const Status& status);

struct GatewayOptions {
  ConnectorOptions connector;  // backoff, transport factory, log sink
  // How long ListTools/Search/Describe may spend (re)listing one connector.
  std::chrono::milliseconds list_timeout{10000};
  // Warnings (e.g. skipped names); default: stderr.
  std::function<void(const std::string&)> log;
};

class Gateway {
 public:
  // From the config's "mcpServers" value (null: no connectors).
  static StatusOr<std::unique_ptr<Gateway>> Create(const nlohmann::json& mcp_servers, GatewayOptions options = {});

  // Disabled connectors are ignored.
  explicit Gateway(std::vector<ConnectorConfig> configs, GatewayOptions options = {});
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Connects every connector in parallel; returns each one's status (a
  // failed one is retried, with backoff, on later use).
  // `cancel` (optional) abandons the attempts early.
  std::map<std::string, Status> ConnectAll(std::chrono::milliseconds timeout, CancelToken* cancel = nullptr);

  // Every visible tool, sorted by name. Connectors that are down contribute
  // their last known list (or nothing).
  // `connectors` (optional) limits which connectors are asked at all, so an
  // unreachable connector outside it cannot slow the listing down.
  std::vector<ToolEntry> ListTools(const ToolFilter& filter = nullptr,
                                   const std::set<std::string>* connectors = nullptr);

  // Ranked search (see tool_search.h). `limit` is clamped to [1, 100].
  // An empty query lists tools by name.
  SearchResult Search(std::string_view query, int limit = kDefaultSearchLimit, const ToolFilter& filter = nullptr,
                      const std::set<std::string>* connectors = nullptr);

  // One tool with its schema and TypeScript signature; NotFound if unknown
  // or filtered out.
  StatusOr<ToolDescription> Describe(const std::string& name, const ToolFilter& filter = nullptr);

  // The catalog entry for a qualified name (exact bytes); NotFound if none.
  StatusOr<ToolEntry> FindTool(const std::string& name, const ToolFilter& filter = nullptr);

  // Calls the tool. `args` must be an object (null means {}). `timeout` is
  // capped by the connector's timeout_ms (0: timeout_ms). Performs no access
  // checks beyond existence (and `filter`, if given).
  CallOutcome CallTool(const std::string& name, const nlohmann::json& args, CancelToken* cancel,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                       const ToolFilter& filter = nullptr);

  // Connectors (of `connectors`, or all) that are down with a known cause:
  // not connected, and their last attempt failed. Their tools are missing
  // from ListTools/Search (or stale), so callers say so to the agent.
  // Never connects or blocks on a server.
  struct Unavailable {
    std::string connector;
    std::string error;
  };
  std::vector<Unavailable> UnavailableConnectors(const std::set<std::string>* connectors = nullptr) const;
  // Every enabled connector is connected now (true without connectors).
  bool AllConnected() const;
  // [{"connector", "error"}] of UnavailableConnectors.
  static nlohmann::json ToJson(const std::vector<Unavailable>& down);
  // "connector(s) unavailable: memory (the server exited: ...); crm (...)".
  static std::string Describe(const std::vector<Unavailable>& down);

  std::vector<std::string> connector_names() const;
  // nullptr if there is no such (enabled) connector.
  Connector* connector(const std::string& name) const;

 private:
  std::vector<ToolEntry> EntriesOf(Connector& connector);
  void Warn(const std::string& line);

  GatewayOptions options_;
  std::map<std::string, std::unique_ptr<Connector>> connectors_;
  std::mutex warn_mu_;
  std::set<std::string> warned_;  // warn once per skipped name
};

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_GATEWAY_H_
