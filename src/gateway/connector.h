// One downstream MCP server as airlock sees it: a connection that is made on
// demand, initialized, listed, restarted after a crash, and used for
// tools/call with a timeout and cancellation.
//
//   Connector crm(config);
//   StatusOr<ToolCallResult> r = crm.CallTool("get_contact", {{"id", 7}}, &cancel, 5s);
//
// Lifecycle: the first use connects (spawn or HTTP), sends `initialize`
// (protocolVersion 2025-06-18, clientInfo "airlock") and
// `notifications/initialized`, then pages through `tools/list` (following
// nextCursor) into a cache. notifications/tools/list_changed marks the cache
// stale; the next Tools() re-lists. If the connection dies (a stdio server
// exits, an HTTP session ends), calls in flight fail with Unavailable and the
// next use reconnects after an exponential backoff (200 ms, doubling to
// 10 s; reset by a successful call). A call waits out the backoff only if it
// fits in its timeout, otherwise it fails with Unavailable at once.
//
// Thread-safe. Secrets (env values, header values) never appear in the
// Status messages or log lines this class produces.
#ifndef AIRLOCK_GATEWAY_CONNECTOR_H_
#define AIRLOCK_GATEWAY_CONNECTOR_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "base/status.h"
#include "gateway/client_transport.h"
#include "gateway/connector_config.h"
#include "gateway/jsonrpc_client.h"

namespace airlock::gateway {

inline constexpr char kClientProtocolVersion[] = "2025-06-18";

// One tool as the downstream server lists it.
struct ToolInfo {
  std::string name;
  std::string title;
  std::string description;
  nlohmann::json input_schema;   // a JSON Schema object ({"type":"object"} if absent)
  nlohmann::json output_schema;  // null if none
  nlohmann::json annotations;    // the server's annotations object, or null
};

// A tools/call result as the server sent it (a CallToolResult object).
struct ToolCallResult {
  nlohmann::json raw;
  bool is_error() const { return raw.is_object() && raw.value("isError", false) == true; }
};

struct ConnectorOptions {
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10000};
  // Builds the transport; default: stdio or HTTP according to the config.
  std::function<std::unique_ptr<ClientTransport>(const ConnectorConfig&)> transport_factory;
  // Where warnings go; default: stderr.
  std::function<void(const std::string&)> log;
};

class Connector {
 public:
  explicit Connector(ConnectorConfig config, ConnectorOptions options = {});
  ~Connector();
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  const ConnectorConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }

  // Connects (if not connected) and lists the tools. Waits out a pending
  // restart backoff if it fits in `timeout`.
  Status Connect(CancelToken* cancel, std::chrono::milliseconds timeout);

  // The tool list. Uses the cache; re-lists after list_changed; connects if
  // the tools were never listed (without waiting for a backoff). When the
  // server is down, the last known list is returned.
  StatusOr<std::shared_ptr<const std::vector<ToolInfo>>> Tools(std::chrono::milliseconds timeout);

  // tools/call. `timeout` is capped by the connector's timeout_ms (0: use
  // timeout_ms). Returns the raw CallToolResult (isError included), or
  // Cancelled / DeadlineExceeded / Unavailable / the server's JSON-RPC error.
  StatusOr<ToolCallResult> CallTool(const std::string& tool, const nlohmann::json& args, CancelToken* cancel,
                                    std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  bool connected() const;
  // For operators: {name, transport, trusted, connected, connects, tools
  // (the cached count, or null if never listed), error (the last failure)}.
  // Never connects or blocks on the server.
  nlohmann::json Health() const;
  // Successful connections so far (1 after the first, +1 per restart).
  int connect_count() const { return connect_count_.load(); }
  // Bumps whenever the cached tool list is replaced.
  uint64_t tools_generation() const { return tools_generation_.load(); }

 private:
  using Clock = std::chrono::steady_clock;

  // Returns a live, initialized client, connecting if needed.
  StatusOr<std::shared_ptr<McpClient>> LiveClient(CancelToken* cancel, Clock::time_point deadline,
                                                  bool wait_for_backoff);
  StatusOr<std::shared_ptr<McpClient>> DoConnect(CancelToken* cancel, Clock::time_point deadline);
  StatusOr<std::vector<ToolInfo>> ListAll(McpClient& client, CancelToken* cancel, Clock::time_point deadline);
  void Relist(Clock::time_point deadline);
  void Log(const std::string& line) const;
  std::chrono::milliseconds Remaining(Clock::time_point deadline) const;

  const ConnectorConfig config_;
  const ConnectorOptions options_;

  // One connect / re-list at a time. A plain mutex taken with try_lock in
  // a polling loop (connector.cc): std::timed_mutex's timed waits use
  // pthread_mutex_clocklock, which ThreadSanitizer does not see, so every
  // unlock was reported as an unlock of an unlocked mutex.
  std::mutex connect_mu_;
  mutable std::mutex mu_;        // guards the fields below
  std::shared_ptr<McpClient> client_;
  std::shared_ptr<const std::vector<ToolInfo>> tools_;
  std::chrono::milliseconds backoff_;
  Clock::time_point next_attempt_{};
  Status last_error_;

  std::atomic<bool> list_changed_{false};
  std::atomic<int> connect_count_{0};
  std::atomic<uint64_t> tools_generation_{0};
};

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_CONNECTOR_H_
