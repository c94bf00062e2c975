// Where the HTTP server's connections wait while they have no complete
// request: one epoll thread for all of them, no worker thread each.
//
// cpp-httplib gives every connection a pool thread from accept to close, so
// a client that sends its header one byte a second (slowloris), trickles a
// body it announced as large, or just keeps an idle keep-alive connection
// open, holds a thread; `threads` such clients stop the server. Here a
// connection reaches the pool only once its whole request, header and body,
// has been read, and goes back to the lobby between keep-alive requests.
//
//   ConnectionLobby lobby({}, [&](int fd, std::string request) {
//     pool.enqueue([fd, request] { Serve(fd, request); });
//   });
//   lobby.Add(accepted_fd, /*kept_alive=*/false);
//
// Header: a new connection has header_deadline to deliver its header (it is
// peeked while incomplete, then read); a kept-alive one has idle_timeout
// for its next request's first byte, then header_deadline from that byte.
// Past its deadline, at EOF, in error, or half-closed before its header
// ended, a connection is closed. A header over max_header_bytes, or with a
// field line over max_field_bytes, gets 431 Request Header Fields Too Large;
// the connection is then drained (briefly) and closed, so that the client
// reads the answer rather than a reset.
//
// Body (Content-Length only; a chunked body gets 411 Length Required): read
// here, exactly its length (a pipelined next request stays in the kernel),
// within body_deadline of the header's end and at body_min_rate bytes/s or
// more over every rate_window; a slower one gets 408 and is closed. A body
// longer than body_limit(head) gets 413 (read and dropped first when it is
// not far over, so the client sees the answer); a malformed Content-Length
// 400. "Expect: 100-continue" is answered here. Thread-safe.
//
// TLS (a TlsConnection given to Add): the handshake is done here too,
// non-blocking, within the new connection's header_deadline (a client that
// never finishes it holds no worker, and is closed at that deadline); a
// failed handshake (plain HTTP, TLS 1.1, no common cipher) closes the
// connection. Requests are then read decrypted, under the same deadlines
// and limits. Plaintext read past the request (a pipelined next one) stays
// in the TlsConnection and is looked at when the connection comes back.
#ifndef AIRLOCK_MCP_CONNECTION_LOBBY_H_
#define AIRLOCK_MCP_CONNECTION_LOBBY_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "mcp/request_head.h"
#include "mcp/tls_connection.h"

namespace airlock::mcp {

// The length of the request header at the start of `bytes` (through the
// blank line that ends it, CRLF or bare LF), or npos while it is incomplete.
size_t RequestHeaderLength(std::string_view bytes);

class ConnectionLobby {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    std::chrono::milliseconds header_deadline{10000};
    std::chrono::milliseconds idle_timeout{5000};
    size_t max_header_bytes = 64 << 10;
    // One header field line (cpp-httplib reads none longer: 8 KiB).
    size_t max_field_bytes = 8 << 10;
    size_t max_waiting = 8192;  // more waiting connections: new ones are closed
    std::chrono::milliseconds body_deadline{30000};  // the whole body, from the header's end
    uint64_t body_min_rate = 1024;                   // bytes/s over each rate_window; 0: none
    std::chrono::milliseconds rate_window{5000};
    // The largest body accepted for a request with this head (larger: 413).
    // Unset: any.
    std::function<uint64_t(const RequestHead&)> body_limit;
  };
  // Called on the lobby's thread with a connection whose request is
  // complete: `request` is its header and body, already read from the fd;
  // the callee now owns the fd, and its TLS state (null: plain).
  using ReadyFn = std::function<void(int fd, std::string request, std::unique_ptr<TlsConnection> tls)>;

  ConnectionLobby(Options options, ReadyFn ready);
  ~ConnectionLobby();  // Stop()
  ConnectionLobby(const ConnectionLobby&) = delete;
  ConnectionLobby& operator=(const ConnectionLobby&) = delete;

  // Takes ownership of `fd` (see the deadlines above), and of `tls` for a
  // TLS connection (fd non-blocking; handshaken already when kept_alive).
  // After Stop() the fd is closed at once.
  void Add(int fd, bool kept_alive, std::unique_ptr<TlsConnection> tls = nullptr);
  // Closes every waiting connection and joins the thread; idempotent.
  void Stop();
  size_t waiting() const;
  // Connections closed with 408 because their body was too slow, and
  // requests refused here (400, 411, 413, 431), since the start.
  uint64_t slow_bodies() const { return slow_bodies_; }
  uint64_t refused() const { return refused_; }

 private:
  struct Waiting {
    Clock::time_point deadline;  // header: its deadline; body: the next rate check
    bool first_byte_seen = false;
    bool in_body = false;
    std::string request;  // body: the header and the body so far
    size_t got = 0;       // body: bytes of the request read
    size_t want = 0;      // body: the request's whole length
    bool discard = false;  // body: over body_limit, read only to answer 413
    bool draining = false;  // answered (431) and half-closed: input is dropped until EOF
    Clock::time_point body_deadline;
    size_t rate_mark = 0;  // request.size() at the last rate check
    std::unique_ptr<TlsConnection> tls;  // null: plain
    bool handshaking = false;            // tls: the handshake is not done
  };
  void Loop();
  // Handles a readiness event: hands over, keeps waiting, or closes.
  void Check(int fd, uint32_t events);
  // The header is complete (`len` bytes): refuse, hand over, or read the body.
  void StartBody(int fd, Waiting& w, std::string_view header, std::unique_lock<std::mutex>& lock);
  // Reads what has arrived of the body; hands over once it is whole.
  void ReadBody(int fd, Waiting& w, std::unique_lock<std::mutex>& lock);
  void HandOver(int fd, std::unique_lock<std::mutex>& lock);
  // Check() for a TLS connection in its header phase (handshake included).
  void CheckTls(int fd, Waiting& w, uint32_t events, std::unique_lock<std::mutex>& lock);
  // recv() / send() (MSG_DONTWAIT) through w's TLS when it has one.
  static ssize_t Receive(int fd, Waiting& w, char* buf, size_t size);
  static void SendBestEffort(int fd, Waiting* w, std::string_view bytes);
  // A deadline passed (mu_ held).
  void Expire(int fd, Waiting& w, Clock::time_point now);
  void Close(int fd);  // mu_ held
  // Writes a one-line error answer (best effort, never blocks), then closes.
  void Refuse(int fd, std::string_view status);  // mu_ held
  // Writes the error answer, half-closes, and drops the client's input until
  // its EOF or a short deadline, then closes (mu_ held).
  void RefuseAndDrain(int fd, Waiting& w, std::string_view status);
  void Drain(int fd, Waiting& w);  // mu_ held

  const Options options_;
  const ReadyFn ready_;
  UniqueFd epoll_;
  UniqueFd wake_;  // eventfd: Stop()
  mutable std::mutex mu_;
  std::map<int, Waiting> waiting_;
  std::vector<char> peek_buffer_;  // the lobby thread's
  // TLS connections added with plaintext already decrypted: no readiness
  // event will come for it, so the loop checks them at once.
  std::vector<int> recheck_;
  bool stopped_ = false;
  std::atomic<uint64_t> slow_bodies_{0};
  std::atomic<uint64_t> refused_{0};
  std::thread thread_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_CONNECTION_LOBBY_H_
