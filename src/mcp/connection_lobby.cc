#include "mcp/connection_lobby.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <strings.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace airlock::mcp {
namespace {

// A body over the limit is read and dropped before the 413 up to this size
// (or twice the limit); a larger one is refused at once.
constexpr uint64_t kMaxDrainBytes = 16 << 20;
// A connection refused for its header (431) is drained this long at most,
// so that closing it with unread input (a TCP reset) does not destroy the
// answer before the client reads it.
constexpr std::chrono::milliseconds kMaxDrainTime{2000};

// The length of the longest header field line (not the request line) in
// `header`, without its line ending.
size_t LongestFieldLine(std::string_view header) {
  size_t longest = 0;
  size_t start = header.find('\n');
  while (start != std::string_view::npos && start + 1 < header.size()) {
    const size_t end = header.find('\n', start + 1);
    const size_t stop = end == std::string_view::npos ? header.size() : end;
    longest = std::max(longest, stop - start - 1);
    start = end;
  }
  return longest;
}

}  // namespace

size_t RequestHeaderLength(std::string_view bytes) {
  const size_t crlf = bytes.find("\r\n\r\n");
  const size_t lf = bytes.find("\n\n");
  size_t len = crlf != std::string_view::npos ? crlf + 4 : std::string_view::npos;
  if (lf != std::string_view::npos && (len == std::string_view::npos || lf + 2 < len)) len = lf + 2;
  return len;
}

ConnectionLobby::ConnectionLobby(Options options, ReadyFn ready)
    : options_(options),
      ready_(std::move(ready)),
      epoll_(epoll_create1(EPOLL_CLOEXEC)),
      wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_.get();
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev);
  thread_ = std::thread([this] { Loop(); });
}

ConnectionLobby::~ConnectionLobby() { Stop(); }

void ConnectionLobby::Add(int fd, bool kept_alive, std::unique_ptr<TlsConnection> tls) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || waiting_.size() >= options_.max_waiting) {
    shutdown(fd, SHUT_RDWR);
    close(fd);
    return;
  }
  const auto now = Clock::now();
  // A new TLS connection's handshake counts against its header deadline.
  Waiting w{now + (kept_alive ? options_.idle_timeout : options_.header_deadline), !kept_alive};
  w.handshaking = tls != nullptr && !kept_alive;
  const bool pending = tls != nullptr && tls->HasPending();
  w.tls = std::move(tls);
  waiting_[fd] = std::move(w);
  // Edge-triggered: woken by new bytes only, so a partial header does not
  // spin; a connection whose header is already buffered is reported at once.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return Close(fd);
  if (pending) {  // decrypted already: the kernel has nothing to report
    recheck_.push_back(fd);
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_.get(), &one, sizeof one);
  }
}

ssize_t ConnectionLobby::Receive(int fd, Waiting& w, char* buf, size_t size) {
  return w.tls ? w.tls->Read(buf, size) : recv(fd, buf, size, MSG_DONTWAIT);
}

void ConnectionLobby::SendBestEffort(int fd, Waiting* w, std::string_view bytes) {
  if (w != nullptr && w->tls) {
    if (!w->handshaking) {
      [[maybe_unused]] ssize_t n = w->tls->Write(bytes.data(), bytes.size());
    }
    return;
  }
  [[maybe_unused]] ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void ConnectionLobby::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_.get(), &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> fds;
  for (const auto& [fd, w] : waiting_) fds.push_back(fd);
  for (int fd : fds) Close(fd);
}

size_t ConnectionLobby::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_.size();
}

void ConnectionLobby::Close(int fd) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  waiting_.erase(fd);
  shutdown(fd, SHUT_RDWR);
  close(fd);
}

void ConnectionLobby::Refuse(int fd, std::string_view status) {
  const std::string answer =
      "HTTP/1.1 " + std::string(status) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  auto it = waiting_.find(fd);
  SendBestEffort(fd, it == waiting_.end() ? nullptr : &it->second, answer);
  Close(fd);
}

void ConnectionLobby::RefuseAndDrain(int fd, Waiting& w, std::string_view status) {
  const std::string answer =
      "HTTP/1.1 " + std::string(status) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  SendBestEffort(fd, &w, answer);
  shutdown(fd, SHUT_WR);
  w.draining = true;
  w.in_body = false;
  w.got = 0;
  w.request.clear();
  w.deadline = Clock::now() + std::min(options_.header_deadline, kMaxDrainTime);
  Drain(fd, w);  // edge-triggered: what already arrived gives no new event
}

void ConnectionLobby::Drain(int fd, Waiting& w) {
  char chunk[64 << 10];
  for (;;) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      w.got += static_cast<size_t>(n);
      if (w.got > kMaxDrainBytes) return Close(fd);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;  // more later, or the deadline
    } else {
      return Close(fd);  // EOF: the client has read the answer and closed
    }
  }
}

void ConnectionLobby::HandOver(int fd, std::unique_lock<std::mutex>& lock) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  auto it = waiting_.find(fd);
  std::string request = std::move(it->second.request);
  std::unique_ptr<TlsConnection> tls = std::move(it->second.tls);
  waiting_.erase(it);
  lock.unlock();
  ready_(fd, std::move(request), std::move(tls));
}

void ConnectionLobby::CheckTls(int fd, Waiting& w, uint32_t events, std::unique_lock<std::mutex>& lock) {
  if (w.handshaking) {
    const TlsConnection::Step step = w.tls->Handshake();
    if (step == TlsConnection::Step::kFailed) return Close(fd);  // not TLS, an old version, no common cipher
    // While the handshake waits to write, wake on writability too.
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET | (step == TlsConnection::Step::kWantWrite ? EPOLLOUT : 0);
    ev.data.fd = fd;
    epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &ev);
    if (step != TlsConnection::Step::kDone) {
      if ((events & (EPOLLRDHUP | EPOLLHUP)) != 0) return Close(fd);
      return;
    }
    w.handshaking = false;
  }
  // Decrypt what has arrived (edge-triggered: all of it) into the read-ahead.
  const bool open = w.tls->Fill(options_.max_header_bytes);
  const std::string_view got = w.tls->buffered();
  const size_t len = RequestHeaderLength(got);
  if (len != std::string_view::npos) return StartBody(fd, w, got.substr(0, len), lock);
  if (!open) return Close(fd);  // EOF, close_notify or an error before the header ended
  if (got.size() >= options_.max_header_bytes) {
    ++refused_;
    return RefuseAndDrain(fd, w, "431 Request Header Fields Too Large");
  }
  if ((events & (EPOLLRDHUP | EPOLLHUP)) != 0) return Close(fd);
  if (!got.empty() && !w.first_byte_seen) {
    w.first_byte_seen = true;
    w.deadline = Clock::now() + options_.header_deadline;
  }
}

void ConnectionLobby::Check(int fd, uint32_t events) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  Waiting& w = it->second;
  if (w.draining) return Drain(fd, w);
  if (w.in_body) return ReadBody(fd, w, lock);
  if (w.tls) return CheckTls(fd, w, events, lock);
  std::vector<char>& peeked = peek_buffer_;  // only this thread checks
  peeked.resize(options_.max_header_bytes);
  const ssize_t n = recv(fd, peeked.data(), peeked.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return Close(fd);  // EOF or error
  if (n < 0) return;
  const size_t len = RequestHeaderLength(std::string_view(peeked.data(), static_cast<size_t>(n)));
  if (len != std::string_view::npos) return StartBody(fd, w, std::string_view(peeked.data(), len), lock);
  if (static_cast<size_t>(n) >= options_.max_header_bytes) {
    ++refused_;
    return RefuseAndDrain(fd, w, "431 Request Header Fields Too Large");
  }
  // The client stopped sending (FIN) before its header ended.
  if ((events & (EPOLLRDHUP | EPOLLHUP)) != 0) return Close(fd);
  if (!w.first_byte_seen) {  // a kept-alive connection's next request begins
    w.first_byte_seen = true;
    w.deadline = Clock::now() + options_.header_deadline;
  }
}

void ConnectionLobby::StartBody(int fd, Waiting& w, std::string_view header, std::unique_lock<std::mutex>& lock) {
  if (LongestFieldLine(header) > options_.max_field_bytes) {
    ++refused_;
    return RefuseAndDrain(fd, w, "431 Request Header Fields Too Large");
  }
  const std::optional<RequestHead> head = ParseRequestHead(header);
  const BodyFraming body = head ? FramingOf(*head) : BodyFraming{BodyFraming::kInvalid};
  if (body.kind == BodyFraming::kInvalid || body.kind == BodyFraming::kChunked) {
    ++refused_;
    return Refuse(fd, body.kind == BodyFraming::kChunked ? "411 Length Required" : "400 Bad Request");
  }
  // Too large: 413, after reading (and dropping) the body so that the
  // client, still sending it, sees the answer rather than a reset; a body
  // far over the limit is not waited for.
  const uint64_t limit = options_.body_limit ? options_.body_limit(*head) : UINT64_MAX;
  if (body.kind == BodyFraming::kLength && body.length > limit) {
    if (body.length > std::max<uint64_t>(kMaxDrainBytes, 2 * limit)) {
      ++refused_;
      return Refuse(fd, "413 Payload Too Large");
    }
    w.discard = true;
  }
  // The header was peeked: read it now (exactly it, not what follows). With
  // TLS it was decrypted into the read-ahead (`header` points there).
  const size_t header_len = header.size();
  if (w.tls) {
    w.request = w.tls->Take(header_len);
  } else {
    w.request.resize(header_len);
    const ssize_t got = recv(fd, w.request.data(), header_len, MSG_DONTWAIT);
    if (got != static_cast<ssize_t>(header_len)) return Close(fd);
  }
  w.got = header_len;
  if (body.kind == BodyFraming::kNone) return HandOver(fd, lock);
  const auto now = Clock::now();
  w.in_body = true;
  w.want = header_len + body.length;
  w.rate_mark = header_len;
  w.body_deadline = now + options_.body_deadline;
  w.deadline = options_.body_min_rate == 0 ? w.body_deadline : std::min(now + options_.rate_window, w.body_deadline);
  const std::optional<std::string> expect = head->Header("Expect");
  if (expect && strcasecmp(expect->c_str(), "100-continue") == 0) {
    static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    SendBestEffort(fd, &w, std::string_view(kContinue, sizeof kContinue - 1));
  }
  ReadBody(fd, w, lock);  // edge-triggered: what already arrived gives no new event
}

void ConnectionLobby::ReadBody(int fd, Waiting& w, std::unique_lock<std::mutex>& lock) {
  char chunk[64 << 10];
  while (w.got < w.want) {
    const ssize_t n = Receive(fd, w, chunk, std::min(sizeof chunk, w.want - w.got));
    if (n > 0) {
      if (!w.discard) w.request.append(chunk, static_cast<size_t>(n));
      w.got += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;  // more later
    } else {
      return Close(fd);  // EOF before the body's end, or an error
    }
  }
  if (w.discard) {
    ++refused_;
    return Refuse(fd, "413 Payload Too Large");
  }
  HandOver(fd, lock);
}

void ConnectionLobby::Expire(int fd, Waiting& w, Clock::time_point now) {
  if (!w.in_body || w.draining) return Close(fd);
  const uint64_t window_need =
      options_.body_min_rate * static_cast<uint64_t>(options_.rate_window.count()) / 1000;
  const uint64_t need = std::min<uint64_t>(w.want - w.rate_mark, window_need);
  if (now >= w.body_deadline || w.got - w.rate_mark < need) {
    ++slow_bodies_;
    return Refuse(fd, "408 Request Timeout");
  }
  w.rate_mark = w.got;
  w.deadline = std::min(now + options_.rate_window, w.body_deadline);
}

void ConnectionLobby::Loop() {
  std::vector<epoll_event> events(256);
  for (;;) {
    int timeout_ms = 1000;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      const auto now = Clock::now();
      std::vector<int> expired;
      for (const auto& [fd, w] : waiting_) {
        if (w.deadline <= now) {
          expired.push_back(fd);
        } else {
          auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(w.deadline - now).count() + 1;
          timeout_ms = static_cast<int>(std::min<int64_t>(timeout_ms, ms));
        }
      }
      for (int fd : expired) Expire(fd, waiting_.at(fd), now);
    }
    const int n = epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), timeout_ms);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_.get()) {
        uint64_t count;
        [[maybe_unused]] ssize_t r = read(wake_.get(), &count, sizeof count);
        continue;
      }
      Check(events[i].data.fd, events[i].events);
    }
    std::vector<int> again;
    {
      std::lock_guard<std::mutex> lock(mu_);
      again.swap(recheck_);
    }
    for (int fd : again) Check(fd, 0);
  }
}

}  // namespace airlock::mcp
