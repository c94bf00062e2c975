#include "base/json_log_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "base/file_io.h"
#include "base/line_splitter.h"
#include "base/time_format.h"

namespace airlock {

using nlohmann::json;

namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Best effort: a log line that cannot be written has nowhere else to go.
void WriteAll(int fd, std::string_view s) { (void)WriteFull(fd, s); }

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool Contains(std::string_view s, std::string_view word) { return s.find(word) != std::string_view::npos; }

}  // namespace

json JsonLogLine(std::string_view line, int64_t unix_ms) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  json out = {{"time", IsoUtc(unix_ms, /*millis=*/true)}, {"level", "info"}, {"event", "server"}};
  std::string_view message = line;
  if (StartsWith(line, "[connector ")) {
    const size_t end = line.find("] ");
    if (end != std::string_view::npos) {
      out["event"] = "connector";
      out["connector"] = std::string(line.substr(11, end - 11));
      message = line.substr(end + 2);
    }
  } else if (StartsWith(line, "airlock-runner[")) {
    out["event"] = "runner";
    const size_t colon = line.find("]: ");
    if (colon != std::string_view::npos) message = line.substr(colon + 3);
  } else if (StartsWith(line, "airlock: runner client: ")) {
    out["event"] = "runner_client";
    message = line.substr(24);
  } else if (StartsWith(line, "airlock: ")) {
    message = line.substr(9);
  }
  if (Contains(line, "WARNING") || Contains(line, "warning:")) out["level"] = "warning";
  if (Contains(line, "error:") || Contains(line, "ERROR") || Contains(line, "fatal")) out["level"] = "error";
  out["message"] = std::string(message);
  return out;
}

void LogEvent(std::string_view event, const json& fields) {
  json out = {{"time", IsoUtc(NowUnixMs(), /*millis=*/true)}, {"level", "info"}, {"event", std::string(event)}};
  if (fields.is_object()) out.update(fields);
  WriteAll(2, out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

StatusOr<std::unique_ptr<JsonLogRelay>> JsonLogRelay::Start() {
  UniqueFd real(fcntl(2, F_DUPFD_CLOEXEC, 3));
  if (!real) return ErrnoError("dup stderr");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  UniqueFd stop(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop) return ErrnoError("eventfd");
  // fd 2 (not close-on-exec: the runner and connectors inherit it) is the pipe now.
  if (dup2(write_end.get(), 2) < 0) return ErrnoError("dup2 onto stderr");
  return std::unique_ptr<JsonLogRelay>(new JsonLogRelay(std::move(real), std::move(read_end), std::move(stop)));
}

JsonLogRelay::JsonLogRelay(UniqueFd real_stderr, UniqueFd pipe_read, UniqueFd stop)
    : real_stderr_(std::move(real_stderr)), pipe_read_(std::move(pipe_read)), stop_(std::move(stop)) {
  thread_ = std::thread([this] { Loop(); });
}

JsonLogRelay::~JsonLogRelay() {
  // The real stderr back on fd 2: the pipe's last write end in this process
  // closes, so the reader sees EOF once children holding it are gone; the
  // stop event makes it finish with what is already there.
  dup2(real_stderr_.get(), 2);
  const uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void JsonLogRelay::Loop() {
  LineSplitter lines;
  char chunk[8192];
  auto emit = [&](std::string_view line) {
    if (line.empty()) return;
    if (line.front() == '{' && line.back() == '}') {
      WriteAll(real_stderr_.get(), std::string(line) + "\n");
      return;
    }
    WriteAll(real_stderr_.get(),
             JsonLogLine(line, NowUnixMs()).dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  };
  bool stopping = false;
  for (;;) {
    pollfd fds[2] = {{pipe_read_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    // Once stopping, only drain what is already in the pipe.
    const int ready = poll(fds, stopping ? 1 : 2, stopping ? 0 : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 && stopping) break;
    if (!stopping && (fds[1].revents & POLLIN)) stopping = true;
    if (!(fds[0].revents & (POLLIN | POLLHUP))) continue;
    const ssize_t n = read(pipe_read_.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer is gone
    lines.Feed(std::string_view(chunk, static_cast<size_t>(n)), emit);
  }
  lines.Finish(emit);
}

}  // namespace airlock
