// The JSON-RPC half of an MCP client: request/response correlation over a
// ClientTransport, with per-request timeouts and cancellation.
//
//   McpClient client(std::make_unique<StdioClientTransport>(config), "crm");
//   client.SetNotificationHandler([](const std::string& method, const json& params) {...});
//   AIRLOCK_RETURN_IF_ERROR(client.Start());
//   StatusOr<json> r = client.Call("tools/list", json::object(), &cancel, 30s);
//
// Thread-safe: many threads may Call concurrently; each waits only for its
// own response. When the caller's CancelToken fires or the timeout passes,
// the server is sent notifications/cancelled {requestId, reason} and Call
// returns Cancelled / DeadlineExceeded (a late response is dropped). If the
// connection dies, every waiting Call returns Unavailable.
//
// Server-to-client requests: `ping` is answered; anything else gets
// "method not found" (airlock offers no sampling, roots or elicitation).
//
// A message nesting deeper than kMaxMessageDepth levels is never handed on
// (code that serializes values recurses per level): a response fails its
// request with ResourceExhausted, anything else is dropped.
#ifndef AIRLOCK_GATEWAY_JSONRPC_CLIENT_H_
#define AIRLOCK_GATEWAY_JSONRPC_CLIENT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "base/status.h"
#include "gateway/client_transport.h"

namespace airlock::gateway {

class McpClient {
 public:
  static constexpr size_t kMaxMessageDepth = 256;

  using NotificationHandler = std::function<void(const std::string& method, const nlohmann::json& params)>;

  // `name` (the connector's) prefixes error messages.
  McpClient(std::unique_ptr<ClientTransport> transport, std::string name);
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // Called on a transport thread for every server notification. Set before Start().
  void SetNotificationHandler(NotificationHandler handler) { notification_handler_ = std::move(handler); }

  Status Start();

  // Sends a request and waits for its result. `cancel` may be null. A
  // JSON-RPC error response becomes a Status (InvalidArgument for -32602,
  // NotFound for -32601, Internal otherwise) carrying the server's message;
  // if `error` is not null it also gets the error object itself.
  StatusOr<nlohmann::json> Call(const std::string& method, nlohmann::json params, CancelToken* cancel,
                                std::chrono::milliseconds timeout, nlohmann::json* error = nullptr);

  Status Notify(const std::string& method, nlohmann::json params);

  // Forwards the negotiated protocol version to the transport.
  void OnInitialized(const std::string& protocol_version) { transport_->OnInitialized(protocol_version); }

  // The modern era (2026-07-28): from now on every request and notification
  // carries `meta` (protocol version, client info and capabilities) in
  // params._meta, and a result's `resultType` is checked and removed: a
  // result that is not "complete" (an input request) fails its call, since
  // airlock answers no server-to-client requests.
  void UseModernEra(nlohmann::json meta);
  bool modern() const;

  // True once the connection is gone (then every Call fails with Unavailable).
  bool closed() const;
  Status close_reason() const;

  // Closes the transport; pending calls fail with Unavailable. Idempotent.
  // Must not be called from a notification handler.
  void Close();

  // Requests sent and not yet answered, cancelled or failed (for tests).
  size_t pending_count() const;

 private:
  struct Pending {
    bool done = false;
    nlohmann::json result;
    nlohmann::json error;  // the error object of an error response
    Status status;
  };

  // Adds the modern era's _meta to `params` (a request's or notification's).
  void AddEraMeta(nlohmann::json* params) const;

  void OnMessage(nlohmann::json message);
  void OnRequestFailed(const nlohmann::json& id, Status status);
  void OnClosed(Status why);
  Status ErrorToStatus(const nlohmann::json& error) const;

  const std::string name_;
  std::unique_ptr<ClientTransport> transport_;
  NotificationHandler notification_handler_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, std::shared_ptr<Pending>> pending_;
  int64_t next_id_ = 1;
  nlohmann::json modern_meta_;  // null: the legacy era
  bool closed_ = false;
  Status close_reason_;
};

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_JSONRPC_CLIENT_H_
