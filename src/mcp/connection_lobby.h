// Where the HTTP server's connections wait while they have no complete
// request header: one epoll thread for all of them, no worker thread each.
//
// cpp-httplib gives every connection a pool thread from accept to close, so
// a client that sends its header one byte a second (slowloris), or just
// keeps an idle keep-alive connection open, holds a thread; `threads` such
// clients stop the server. Here a connection reaches the pool only once its
// whole header is in the kernel's buffer (peeked, not read), and goes back
// to the lobby between keep-alive requests.
//
//   ConnectionLobby lobby({}, [&](int fd) { pool.enqueue([fd] { Serve(fd); }); });
//   lobby.Add(accepted_fd, /*kept_alive=*/false);
//
// Deadlines: a new connection has header_deadline to deliver its header; a
// kept-alive one has idle_timeout for its next request's first byte, then
// header_deadline from that byte. A connection past its deadline, at EOF,
// in error, half-closed before its header ended, or whose header exceeds
// max_header_bytes is closed. Thread-safe.
#ifndef AIRLOCK_MCP_CONNECTION_LOBBY_H_
#define AIRLOCK_MCP_CONNECTION_LOBBY_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "base/unique_fd.h"

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
    size_t max_waiting = 8192;  // more waiting connections: new ones are closed
  };
  // Called on the lobby's thread with a connection whose header is complete;
  // it now owns the fd.
  using ReadyFn = std::function<void(int fd)>;

  ConnectionLobby(Options options, ReadyFn ready);
  ~ConnectionLobby();  // Stop()
  ConnectionLobby(const ConnectionLobby&) = delete;
  ConnectionLobby& operator=(const ConnectionLobby&) = delete;

  // Takes ownership of `fd` (see the deadlines above). After Stop() the fd
  // is closed at once.
  void Add(int fd, bool kept_alive);
  // Closes every waiting connection and joins the thread; idempotent.
  void Stop();
  size_t waiting() const;

 private:
  struct Waiting {
    Clock::time_point deadline;
    bool first_byte_seen;
  };
  void Loop();
  // Handles a readiness event: hands over, keeps waiting, or closes.
  void Check(int fd, uint32_t events);
  void Close(int fd);  // mu_ held

  const Options options_;
  const ReadyFn ready_;
  UniqueFd epoll_;
  UniqueFd wake_;  // eventfd: Stop()
  mutable std::mutex mu_;
  std::map<int, Waiting> waiting_;
  std::vector<char> peek_buffer_;  // the lobby thread's
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_CONNECTION_LOBBY_H_
