// cpp-httplib's Server with its connections handled by airlock: a
// connection gets a pool thread only once a whole request of it (header and
// body) has arrived, and only while that request is answered
// (ConnectionLobby holds it otherwise, with deadlines for headers and
// bodies), so slow or idle clients cannot occupy the pool, and Shutdown()
// is immediate.
//
//   GuardedHttpServer http(threads, {});   // then Get/Post/... as usual
//   http.bind_to_port(...); std::thread t([&] { http.listen_after_bind(); });
//   ...
//   http.Shutdown(); t.join();
//
// Per connection, requests are served one at a time (HTTP/1.1 keep-alive);
// bytes of a pipelined next request are never read ahead, so they wait in
// the kernel for the lobby (with TLS: in the connection's read-ahead).
//
// With set_tls() every connection speaks TLS: the lobby does the handshake
// under the header deadline, the worker reads and writes through it, and
// each new connection uses the credentials' context at its accept (so a
// reload counts from the next connection; tls_context.h).
#ifndef AIRLOCK_MCP_GUARDED_HTTP_SERVER_H_
#define AIRLOCK_MCP_GUARDED_HTTP_SERVER_H_

#include <httplib.h>

#include <atomic>
#include <functional>
#include <memory>

#include "mcp/connection_lobby.h"
#include "mcp/tls_context.h"

namespace airlock::mcp {

class GuardedHttpServer : public httplib::Server {
 public:
  GuardedHttpServer(int threads, ConnectionLobby::Options lobby);
  ~GuardedHttpServer() override;

  // Closes waiting connections, then stops listening (httplib's stop());
  // requests being answered finish on their threads. Idempotent.
  void Shutdown();
  size_t waiting_connections() const { return lobby_.waiting(); }
  const ConnectionLobby& lobby() const { return lobby_; }

  // Called with every request once its head is parsed, before it is
  // routed (e.g. to drop a header). Set before listening.
  void set_request_filter(std::function<void(httplib::Request&)> filter) { filter_ = std::move(filter); }
  // Serve HTTPS with these credentials. Set before listening.
  void set_tls(std::shared_ptr<TlsCredentials> tls) { tls_ = std::move(tls); }

 private:
  // httplib calls this on a pool thread for every accepted connection.
  bool process_and_close_socket(socket_t sock) override;
  // Answers one request of `fd` (`request`: its header and body, as the
  // lobby read them), then returns it to the lobby (keep-alive) or closes it.
  void ServeOne(int fd, std::string request, std::unique_ptr<TlsConnection> tls);

  std::atomic<httplib::TaskQueue*> pool_{nullptr};
  std::atomic<bool> shutting_down_{false};
  ConnectionLobby lobby_;
  std::function<void(httplib::Request&)> filter_;
  std::shared_ptr<TlsCredentials> tls_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_GUARDED_HTTP_SERVER_H_
