// MCP Streamable HTTP (2025-06-18), client side, on cpp-httplib.
//
// Every message is a POST of one JSON-RPC object to the configured URL with
// `Accept: application/json, text/event-stream`, the configured headers,
// `Mcp-Session-Id` once the server assigned one at initialize, and
// `MCP-Protocol-Version` after initialize. A request's answer is either one
// JSON object or an SSE stream that may carry notifications and server
// requests before the response; both are parsed. Each request runs on its own
// thread (so Send never waits for the server). Server-initiated
// notifications that are not tied to a request (tools/list_changed) arrive
// on the optional GET stream, opened after initialize (a 405 means the server
// has none). Cancelling a request (sending notifications/cancelled for it)
// also drops its response stream. Close() ends the session with DELETE.
//
// Header values are secrets: they never appear in errors or logs; neither
// does the URL's path or query (see RedactedTarget).
#ifndef AIRLOCK_GATEWAY_HTTP_CLIENT_TRANSPORT_H_
#define AIRLOCK_GATEWAY_HTTP_CLIENT_TRANSPORT_H_

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gateway/client_transport.h"
#include "gateway/connector_config.h"

namespace httplib {
class Client;
}

namespace airlock::gateway {

class HttpClientTransport : public ClientTransport {
 public:
  static constexpr size_t kMaxMessageBytes = 64u << 20;

  explicit HttpClientTransport(ConnectorConfig config);
  ~HttpClientTransport() override;

  Status Start(TransportCallbacks callbacks) override;
  Status Send(const nlohmann::json& message) override;
  void OnInitialized(const std::string& protocol_version) override;
  void Close() override;

  std::string session_id() const;

 private:
  struct Worker {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  struct PostOutcome {
    int http_status = 0;
    bool delivered_response = false;  // a JSON-RPC response for the id came back
    Status status;                    // transport-level failure
  };

  std::unique_ptr<httplib::Client> NewClient() const;
  // The headers of a GET (for_get) or of the POST of `message`: a modern
  // message (one with the modern _meta) gets the modern era's headers
  // (modern_headers.h) instead of the session's.
  std::vector<std::pair<std::string, std::string>> Headers(bool for_get, const nlohmann::json* message = nullptr) const;
  // POSTs one message and delivers whatever comes back. `key` registers the
  // client so a cancellation can stop it ("" for none).
  PostOutcome Post(const nlohmann::json& message, const std::string& key);
  void RequestThread(nlohmann::json message);
  void GetStreamLoop();
  void Deliver(const std::string& json_text, const nlohmann::json& request_id, bool* got_response);
  void SignalClosed(Status why);
  void StopCancelled();
  void ReapWorkers(bool all);

  const ConnectorConfig config_;
  std::string origin_;  // scheme://host:port
  std::string path_;    // path?query
  std::string basic_user_, basic_password_;
  TransportCallbacks callbacks_;

  mutable std::mutex mu_;
  std::string session_id_;
  std::string protocol_version_;
  std::map<std::string, httplib::Client*> inflight_;  // request id (dumped) -> its client
  std::set<std::string> pending_;                     // ids of requests not finished
  std::set<std::string> cancelled_;                   // ids whose stream is to be dropped
  httplib::Client* get_client_ = nullptr;
  std::list<std::unique_ptr<Worker>> workers_;
  std::thread get_thread_;
  std::atomic<bool> closing_{false};
  std::once_flag closed_once_;
};

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_HTTP_CLIENT_TRANSPORT_H_
