// The wire under an MCP client: something that carries JSON-RPC messages to
// one downstream server and hands back what the server sends.
//
// Implementations: StdioClientTransport (a spawned process, newline-delimited
// JSON) and HttpClientTransport (Streamable HTTP). McpClient sits on top and
// does the JSON-RPC bookkeeping.
#ifndef AIRLOCK_GATEWAY_CLIENT_TRANSPORT_H_
#define AIRLOCK_GATEWAY_CLIENT_TRANSPORT_H_

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::gateway {

struct TransportCallbacks {
  // One message from the server (request, notification or response). Called
  // from a transport thread; must not block on the transport.
  std::function<void(nlohmann::json message)> on_message;
  // A request we sent will never get a response (HTTP error, connection
  // refused...). `id` is the request's id.
  std::function<void(const nlohmann::json& id, Status status)> on_request_failed;
  // The connection is gone for good (process exited, session terminated).
  // Called at most once, from a transport thread.
  std::function<void(Status why)> on_closed;
};

class ClientTransport {
 public:
  virtual ~ClientTransport() = default;

  // Connects (spawns the process / checks the URL). Callbacks may fire from
  // then on until Close() returns.
  virtual Status Start(TransportCallbacks callbacks) = 0;

  // Sends one message. Never blocks for the server's answer: a request's
  // response arrives through on_message (or on_request_failed).
  virtual Status Send(const nlohmann::json& message) = 0;

  // Tells the transport the negotiated protocol version (HTTP sends it as
  // MCP-Protocol-Version on every later request and may open its GET stream).
  virtual void OnInitialized(const std::string& protocol_version) {}

  // Stops everything; no callback fires after Close() returns. Idempotent.
  virtual void Close() = 0;
};

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_CLIENT_TRANSPORT_H_
