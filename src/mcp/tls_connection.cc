#include "mcp/tls_connection.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace airlock::mcp {

std::unique_ptr<TlsConnection> TlsConnection::Accept(const TlsContext& ctx, int fd) {
  SSL* ssl = SSL_new(ctx.get());
  if (ssl == nullptr) return nullptr;
  if (SSL_set_fd(ssl, fd) != 1) {  // a socket BIO that does not close fd
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsConnection>(new TlsConnection(ssl));
}

TlsConnection::~TlsConnection() { SSL_free(ssl_); }

TlsConnection::Step TlsConnection::Handshake() {
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) return Step::kDone;
  switch (SSL_get_error(ssl_, r)) {
    case SSL_ERROR_WANT_READ:
      return Step::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return Step::kWantWrite;
    default:
      ERR_clear_error();
      return Step::kFailed;
  }
}

ssize_t TlsConnection::Failed(int r) {
  const int e = SSL_get_error(ssl_, r);
  ERR_clear_error();
  switch (e) {
    case SSL_ERROR_WANT_READ:
      want_read_ = true;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_WANT_WRITE:
      want_read_ = false;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:  // close_notify
      return 0;
    case SSL_ERROR_SYSCALL:
      if (errno == 0) errno = ECONNRESET;  // EOF without close_notify
      return -1;
    default:
      errno = EPROTO;
      return -1;
  }
}

ssize_t TlsConnection::Read(char* buf, size_t size) {
  if (size == 0) return 0;
  if (!ahead_.empty()) {
    const size_t n = std::min(size, ahead_.size());
    std::memcpy(buf, ahead_.data(), n);
    ahead_.erase(0, n);
    return static_cast<ssize_t>(n);
  }
  ERR_clear_error();
  errno = 0;
  const int r = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  return r > 0 ? r : Failed(r);
}

bool TlsConnection::Fill(size_t limit) {
  char chunk[16 << 10];
  while (ahead_.size() < limit) {
    ERR_clear_error();
    errno = 0;
    const int r = SSL_read(ssl_, chunk, static_cast<int>(std::min(sizeof chunk, limit - ahead_.size())));
    if (r > 0) {
      ahead_.append(chunk, static_cast<size_t>(r));
      continue;
    }
    const ssize_t f = Failed(r);
    if (f < 0 && errno == EAGAIN) return true;
    return false;
  }
  return true;
}

std::string TlsConnection::Take(size_t n) {
  n = std::min(n, ahead_.size());
  std::string out = ahead_.substr(0, n);
  ahead_.erase(0, n);
  return out;
}

bool TlsConnection::HasPending() const { return !ahead_.empty() || SSL_pending(ssl_) > 0; }

ssize_t TlsConnection::Write(const char* buf, size_t size) {
  if (size == 0) return 0;
  ERR_clear_error();
  errno = 0;
  const int r = SSL_write(ssl_, buf, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  return r > 0 ? r : Failed(r);
}

void TlsConnection::Shutdown() {
  ERR_clear_error();
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
  ERR_clear_error();
}

}  // namespace airlock::mcp
