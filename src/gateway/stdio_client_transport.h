// MCP over stdio, client side: spawns the server and exchanges
// newline-delimited JSON-RPC messages over its stdin/stdout.
//
// The server's environment is exactly the configured `env` plus PATH and
// HOME (taken from airlock unless configured), never airlock's own
// environment, so airlock's secrets do not leak to a downstream server and
// one connector's secrets do not reach another. Its stderr goes to
// airlock's stderr line by line with a "[connector NAME] " prefix, or to
// /dev/null. Close() (and the destructor) closes stdin, then terminates and
// reaps the process group.
#ifndef AIRLOCK_GATEWAY_STDIO_CLIENT_TRANSPORT_H_
#define AIRLOCK_GATEWAY_STDIO_CLIENT_TRANSPORT_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gateway/child_process.h"
#include "gateway/client_transport.h"
#include "gateway/connector_config.h"

namespace airlock::gateway {

class StdioClientTransport : public ClientTransport {
 public:
  // Messages (lines) larger than this close the connection.
  static constexpr size_t kMaxMessageBytes = 64u << 20;

  explicit StdioClientTransport(ConnectorConfig config);
  ~StdioClientTransport() override;

  Status Start(TransportCallbacks callbacks) override;
  Status Send(const nlohmann::json& message) override;
  void Close() override;

  // The child's pid (for tests), -1 before Start or after Close.
  pid_t pid() const;

  // The environment the server is started with ("KEY=VALUE").
  static std::vector<std::string> BuildEnvironment(const ConnectorConfig& config);

 private:
  void ReadLoop(int fd);
  void StderrLoop(int fd);

  const ConnectorConfig config_;
  TransportCallbacks callbacks_;
  std::unique_ptr<ChildProcess> child_;
  std::mutex write_mu_;
  std::thread reader_;
  std::thread stderr_reader_;
  std::atomic<bool> closing_{false};
  std::once_flag closed_once_;
};

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_STDIO_CLIENT_TRANSPORT_H_
