#include "mcp/stdio_transport.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "base/file_io.h"
#include "protocol/json_rpc.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

// Writes whole lines to an fd, one writer at a time.
class LineWriter : public ReplyChannel {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}

  void Notify(const json& notification) override { Write(notification); }
  void Finish(const json* response) override {
    if (response != nullptr) Write(*response);
  }

 private:
  void Write(const json& message) {
    std::string line = protocol::jsonrpc::Serialize(message);
    line += '\n';
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return;
    // A failed write: the client is gone; EOF on input will follow.
    if (!WriteFull(fd_, line).ok()) broken_ = true;
  }

  const int fd_;
  std::mutex mu_;
  bool broken_ = false;
};

}  // namespace

int ServeStdio(McpServer& server, int in_fd, int out_fd, int stop_fd) {
  ::signal(SIGPIPE, SIG_IGN);
  auto writer = std::make_shared<LineWriter>(out_fd);
  std::shared_ptr<Session> session = server.NewSession(writer);
  const size_t limit = server.config().server.max_message_bytes;

  std::string line;
  bool discarding = false;  // inside an over-long line
  char buf[65536];
  int rc = 0;
  for (;;) {
    if (stop_fd >= 0) {
      pollfd fds[2] = {{in_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) {
        std::fprintf(stderr, "airlock: poll stdin: %s\n", std::strerror(errno));
        rc = 1;
        break;
      }
      if (fds[1].revents != 0) break;  // asked to stop: as at EOF
      if (fds[0].revents == 0) continue;
    }
    ssize_t n = ::read(in_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::fprintf(stderr, "airlock: reading stdin: %s\n", std::strerror(errno));
      rc = 1;
      break;
    }
    if (n == 0) {  // a last line without '\n' still counts
      if (!discarding && line.find_first_not_of(" \t\r") != std::string::npos) session->HandleText(line, writer);
      break;
    }
    size_t start = 0;
    while (start < static_cast<size_t>(n)) {
      const char* nl = static_cast<const char*>(std::memchr(buf + start, '\n', n - start));
      size_t end = nl ? static_cast<size_t>(nl - buf) : static_cast<size_t>(n);
      if (!discarding) {
        line.append(buf + start, end - start);
        if (line.size() > limit) {
          discarding = true;
          line.clear();
          line.shrink_to_fit();
          json error = protocol::jsonrpc::MakeError(nullptr, protocol::jsonrpc::kInvalidRequest,
                                          "message too large (limit " + std::to_string(limit) + " bytes)");
          writer->Finish(&error);
        }
      }
      if (nl == nullptr) break;
      if (!discarding) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") != std::string::npos) session->HandleText(line, writer);
      }
      line.clear();
      discarding = false;
      start = end + 1;
    }
  }
  session->Close();
  return rc;
}

}  // namespace airlock::mcp
