#include "mcp/connection_lobby.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

namespace airlock::mcp {

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

void ConnectionLobby::Add(int fd, bool kept_alive) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || waiting_.size() >= options_.max_waiting) {
    shutdown(fd, SHUT_RDWR);
    close(fd);
    return;
  }
  const auto now = Clock::now();
  waiting_[fd] = {now + (kept_alive ? options_.idle_timeout : options_.header_deadline), !kept_alive};
  // Edge-triggered: woken by new bytes only, so a partial header does not
  // spin; a connection whose header is already buffered is reported at once.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) Close(fd);
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

void ConnectionLobby::Check(int fd, uint32_t events) {
  std::vector<char>& peeked = peek_buffer_;  // only this thread checks
  peeked.resize(options_.max_header_bytes);
  const ssize_t n = recv(fd, peeked.data(), peeked.size(), MSG_PEEK | MSG_DONTWAIT);
  std::unique_lock<std::mutex> lock(mu_);
  auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return Close(fd);  // EOF or error
  if (n < 0) return;
  if (RequestHeaderLength(std::string_view(peeked.data(), static_cast<size_t>(n))) != std::string_view::npos) {
    epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
    waiting_.erase(it);
    lock.unlock();
    ready_(fd);
    return;
  }
  // Too long, or the client stopped sending (FIN) before its header ended.
  if (static_cast<size_t>(n) >= options_.max_header_bytes || (events & (EPOLLRDHUP | EPOLLHUP)) != 0) {
    return Close(fd);
  }
  if (!it->second.first_byte_seen) {  // a kept-alive connection's next request begins
    it->second.first_byte_seen = true;
    it->second.deadline = Clock::now() + options_.header_deadline;
  }
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
      for (int fd : expired) Close(fd);
    }
    const int n = epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), timeout_ms);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_.get()) continue;
      Check(events[i].data.fd, events[i].events);
    }
  }
}

}  // namespace airlock::mcp
