// One server-side TLS connection over a non-blocking socket: the SSL object
// (freed with this; the fd is not closed here) and the plaintext read ahead
// of the current request. It travels with its fd between the lobby (which
// completes the handshake and reads requests under deadlines) and the
// worker that answers a request (connection_lobby.h, guarded_http_server.h).
// Used by one thread at a time.
//
//   auto tls = TlsConnection::Accept(ctx, fd);   // fd non-blocking
//   tls->Handshake();                            // until kDone, on readiness
//   ssize_t n = tls->Read(buf, size);            // recv()-like; EAGAIN: later
#ifndef AIRLOCK_MCP_TLS_CONNECTION_H_
#define AIRLOCK_MCP_TLS_CONNECTION_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "mcp/tls_context.h"

typedef struct ssl_st SSL;

namespace airlock::mcp {

class TlsConnection {
 public:
  enum class Step { kDone, kWantRead, kWantWrite, kFailed };

  // Null when OpenSSL cannot make the SSL object.
  static std::unique_ptr<TlsConnection> Accept(const TlsContext& ctx, int fd);
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  // Advances the server handshake; never blocks.
  Step Handshake();

  // Like recv(fd, ..., MSG_DONTWAIT): bytes (the read-ahead first), 0 at the
  // peer's close, or -1 with errno EAGAIN (nothing yet) or another error.
  ssize_t Read(char* buf, size_t size);
  // Reads what has arrived into the read-ahead until it holds `limit`
  // bytes. False at the peer's close or on an error (what was read stays).
  bool Fill(size_t limit);
  // The read-ahead: plaintext read from the connection, not yet consumed.
  std::string_view buffered() const { return ahead_; }
  // Removes and returns the first `n` bytes of the read-ahead.
  std::string Take(size_t n);
  // Plaintext is waiting (read ahead here, or decrypted inside OpenSSL),
  // which no readiness event of the socket will announce.
  bool HasPending() const;

  // Like send(fd, ..., MSG_DONTWAIT): bytes written, or -1 with errno EAGAIN
  // (try again when the socket is writable, or readable after
  // `want_read()`), or another error.
  ssize_t Write(const char* buf, size_t size);
  // The last EAGAIN waits for the socket to be readable, not writable.
  bool want_read() const { return want_read_; }

  // Sends close_notify (best effort, never blocks).
  void Shutdown();

 private:
  explicit TlsConnection(SSL* ssl) : ssl_(ssl) {}
  // errno and the return value for a failed SSL_read/SSL_write result `r`.
  ssize_t Failed(int r);

  SSL* const ssl_;
  std::string ahead_;
  bool want_read_ = false;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TLS_CONNECTION_H_
