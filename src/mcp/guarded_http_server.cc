#include "mcp/guarded_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <string_view>

namespace airlock::mcp {
namespace {

// httplib::Stream over a connected socket, through `tls` when it is set.
// The request, header and body, was read by the lobby and is served from
// `request`; anything read beyond it (nothing, unless httplib misjudges the
// body) comes from the socket.
class SocketStream : public httplib::Stream {
 public:
  SocketStream(int fd, TlsConnection* tls, std::string request, int read_timeout_ms, int write_timeout_ms)
      : fd_(fd),
        tls_(tls),
        read_timeout_ms_(read_timeout_ms),
        write_timeout_ms_(write_timeout_ms),
        buf_(std::move(request)) {}

  bool is_readable() const override {
    return pos_ < buf_.size() || (tls_ != nullptr && tls_->HasPending()) || Poll(POLLIN, read_timeout_ms_);
  }
  bool is_writable() const override { return Poll(POLLOUT, write_timeout_ms_) && Alive(); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ < buf_.size()) {
      const size_t n = std::min(size, buf_.size() - pos_);
      std::memcpy(ptr, buf_.data() + pos_, n);
      pos_ += n;
      return static_cast<ssize_t>(n);
    }
    if (tls_ != nullptr) {
      for (;;) {  // the fd is non-blocking: wait as OpenSSL asks
        const ssize_t n = tls_->Read(ptr, size);
        if (n >= 0 || errno != EAGAIN) return n;
        if (!Poll(tls_->want_read() ? POLLIN : POLLOUT, read_timeout_ms_)) return -1;
      }
    }
    if (!Poll(POLLIN, read_timeout_ms_)) return -1;
    ssize_t n;
    do {
      n = recv(fd_, ptr, size, 0);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  // As httplib's own stream: a peer that has closed (FIN seen) fails the
  // write at once, so a response stream notices a vanished client.
  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    if (tls_ != nullptr) {
      for (;;) {
        const ssize_t n = tls_->Write(ptr, size);
        if (n >= 0 || errno != EAGAIN) return n;
        if (!Poll(tls_->want_read() ? POLLIN : POLLOUT, write_timeout_ms_)) return -1;
      }
    }
    ssize_t n;
    do {
      n = send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(getsockname, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  bool Poll(short events, int timeout_ms) const {
    pollfd p{fd_, events, 0};
    int r;
    do {
      r = poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & events) != 0;
  }

  // False once the peer has closed (a readable socket with nothing to read).
  bool Alive() const {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return true;
    char c;
    return recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

  template <typename Fn>
  void Address(Fn fn, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (fn(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
      port = ntohs(a->sin6_port);
    }
    ip = text;
  }

  const int fd_;
  TlsConnection* const tls_;
  const int read_timeout_ms_;
  const int write_timeout_ms_;
  std::string buf_;
  size_t pos_ = 0;
};

// httplib's ThreadPool behind a lock that the lobby's hand-overs and the
// pool's shutdown both take. The listener thread shuts the pool down and
// deletes it after the lobby thread's last hand-over; Shutdown orders the
// two (it joins the lobby, then closes the listening socket), but through
// a socket, which ThreadSanitizer cannot see. The lock makes the order one
// it can see.
class LockedTaskQueue : public httplib::TaskQueue {
 public:
  explicit LockedTaskQueue(size_t threads) : pool_(threads) {}
  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    pool_.enqueue(std::move(fn));
  }
  void shutdown() override {
    std::lock_guard<std::mutex> lock(mu_);
    pool_.shutdown();
  }

 private:
  std::mutex mu_;
  httplib::ThreadPool pool_;
};

}  // namespace

GuardedHttpServer::GuardedHttpServer(int threads, ConnectionLobby::Options lobby)
    : lobby_(lobby, [this](int fd, std::string request, std::unique_ptr<TlsConnection> tls) {
        httplib::TaskQueue* pool = pool_.load();
        if (pool == nullptr || shutting_down_) {
          tls.reset();
          shutdown(fd, SHUT_RDWR);
          close(fd);
          return;
        }
        // std::function needs a copyable callable: the TLS state rides in a
        // shared holder (freed with the task should it never run).
        auto held = std::make_shared<std::unique_ptr<TlsConnection>>(std::move(tls));
        pool->enqueue([this, fd, request = std::move(request), held]() mutable {
          ServeOne(fd, std::move(request), std::move(*held));
        });
      }) {
  new_task_queue = [this, threads] {
    auto* pool = new LockedTaskQueue(static_cast<size_t>(threads));
    pool_ = pool;
    return pool;
  };
}

GuardedHttpServer::~GuardedHttpServer() { Shutdown(); }

void GuardedHttpServer::Shutdown() {
  if (shutting_down_.exchange(true)) return;
  lobby_.Stop();  // no more hand-overs to the pool from here on
  stop();
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  // Responses go out in several writes (headers, chunks, SSE events):
  // without TCP_NODELAY each waits for the client's delayed ACK (~40 ms).
  int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!tls_) {
    lobby_.Add(sock, /*kept_alive=*/false);
    return true;
  }
  // TLS: OpenSSL reads and writes without waiting (the lobby and the
  // stream wait as it asks), and the credentials in force now are this
  // connection's.
  fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
  std::unique_ptr<TlsConnection> tls = TlsConnection::Accept(*tls_->Current(), sock);
  if (!tls) {
    shutdown(sock, SHUT_RDWR);
    close(sock);
    return true;
  }
  lobby_.Add(sock, /*kept_alive=*/false, std::move(tls));
  return true;
}

void GuardedHttpServer::ServeOne(int fd, std::string request, std::unique_ptr<TlsConnection> tls) {
  bool connection_closed = false;
  bool ok;
  // The lobby answered "Expect: 100-continue" already (and read the body).
  auto setup = [this](httplib::Request& req) {
    req.headers.erase("Expect");
    if (filter_) filter_(req);
  };
  {
    SocketStream stream(fd, tls.get(), std::move(request),
                        static_cast<int>(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000),
                        static_cast<int>(write_timeout_sec_ * 1000 + write_timeout_usec_ / 1000));
    const bool close_connection = shutting_down_ || svr_sock_ == INVALID_SOCKET;
    ok = process_request(stream, close_connection, connection_closed, setup) && !close_connection;
  }
  if (ok && !connection_closed && !shutting_down_) {
    lobby_.Add(fd, /*kept_alive=*/true, std::move(tls));
  } else {
    if (tls) tls->Shutdown();
    tls.reset();
    shutdown(fd, SHUT_RDWR);
    close(fd);
  }
}

}  // namespace airlock::mcp
