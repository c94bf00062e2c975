#include "gateway/stdio_client_transport.h"

#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "base/line_splitter.h"
#include "protocol/json_rpc.h"

namespace airlock::gateway {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

std::string AirlockPath() {
  const char* p = getenv("PATH");
  return (p != nullptr && *p != '\0') ? p : kDefaultPath;
}

std::string AirlockHome() {
  const char* h = getenv("HOME");
  if (h != nullptr && *h != '\0') return h;
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
  return "/";
}

// Writes all of `data`, turning a closed pipe into EPIPE instead of a
// process-killing SIGPIPE (blocked in this thread, then consumed).
Status WriteAll(int fd, std::string_view data) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  Status st;
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      st = errno == EPIPE ? Unavailable("the server closed its stdin") : ErrnoError("write");
      if (errno == EPIPE) {
        timespec zero{};
        sigtimedwait(&pipe_set, nullptr, &zero);
      }
      break;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return st;
}

}  // namespace

StdioClientTransport::StdioClientTransport(ConnectorConfig config) : config_(std::move(config)) {}

StdioClientTransport::~StdioClientTransport() { Close(); }

std::vector<std::string> StdioClientTransport::BuildEnvironment(const ConnectorConfig& config) {
  std::vector<std::string> env;
  if (!config.env.count("PATH")) env.push_back("PATH=" + AirlockPath());
  if (!config.env.count("HOME")) env.push_back("HOME=" + AirlockHome());
  for (const auto& [key, value] : config.env) env.push_back(key + "=" + value);
  return env;
}

Status StdioClientTransport::Start(TransportCallbacks callbacks) {
  callbacks_ = std::move(callbacks);
  SpawnOptions opts;
  opts.command = config_.command;
  opts.args = config_.args;
  opts.env = BuildEnvironment(config_);
  opts.cwd = config_.cwd;
  auto path_it = config_.env.find("PATH");
  opts.search_path = path_it != config_.env.end() ? path_it->second : AirlockPath();
  opts.capture_stderr = config_.stderr_mode == StderrMode::kInherit;
  auto child = ChildProcess::Spawn(opts);
  if (!child.ok()) {
    return Status(child.status().code(), "connector '" + config_.name + "' (" + RedactedTarget(config_) +
                                             "): " + child.status().message());
  }
  child_ = std::move(child).value();
  reader_ = std::thread(&StdioClientTransport::ReadLoop, this, child_->stdout_fd());
  if (child_->stderr_fd() >= 0) {
    stderr_reader_ = std::thread(&StdioClientTransport::StderrLoop, this, child_->stderr_fd());
  }
  return OkStatus();
}

Status StdioClientTransport::Send(const nlohmann::json& message) {
  std::string line = protocol::jsonrpc::Serialize(message);
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(write_mu_);
  if (child_ == nullptr || closing_.load() || child_->stdin_fd() < 0) {
    return Unavailable("connector '" + config_.name + "' is not running");
  }
  Status st = WriteAll(child_->stdin_fd(), line);
  if (!st.ok()) return st.WithContext("connector '" + config_.name + "'");
  return OkStatus();
}

void StdioClientTransport::ReadLoop(int fd) {
  std::string buffer;
  char chunk[65536];
  Status why = Unavailable("connector '" + config_.name + "': the server exited");
  while (true) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t start = buffer.size();
    buffer.append(chunk, static_cast<size_t>(n));
    size_t line_begin = 0;
    for (size_t i = start; i < buffer.size(); ++i) {
      if (buffer[i] != '\n') continue;
      std::string_view line(buffer.data() + line_begin, i - line_begin);
      line_begin = i + 1;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
      nlohmann::json message = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (message.is_discarded() || !message.is_object()) {
        // A server that prints non-JSON on stdout is broken; skip the line
        // (never echo it: it could contain anything).
        std::cerr << "[connector " << config_.name << "] ignoring a non-JSON line on stdout\n";
        continue;
      }
      if (!closing_.load() && callbacks_.on_message) callbacks_.on_message(std::move(message));
    }
    buffer.erase(0, line_begin);
    if (buffer.size() > kMaxMessageBytes) {
      why = Unavailable("connector '" + config_.name + "': message larger than " +
                        std::to_string(kMaxMessageBytes) + " bytes");
      break;
    }
  }
  if (!closing_.load() && callbacks_.on_closed) {
    std::call_once(closed_once_, [&] { callbacks_.on_closed(why); });
  }
}

void StdioClientTransport::StderrLoop(int fd) {
  LineSplitter lines(65536);
  char chunk[4096];
  const std::string prefix = "[connector " + config_.name + "] ";
  auto flush_line = [&](std::string_view line) {
    std::string out = prefix;
    out.append(line.substr(0, 4096));
    out.push_back('\n');
    std::cerr << out << std::flush;
  };
  while (true) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    lines.Feed(std::string_view(chunk, static_cast<size_t>(n)), flush_line);
  }
  lines.Finish(flush_line);
}

pid_t StdioClientTransport::pid() const { return child_ ? child_->pid() : -1; }

void StdioClientTransport::Close() {
  if (closing_.exchange(true)) {
    return;
  }
  if (child_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      child_->CloseStdin();
    }
    // Terminating the group closes the pipes' write ends, which ends the readers.
    child_->TerminateAndReap();
  }
  if (reader_.joinable()) reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
  child_.reset();
}

}  // namespace airlock::gateway
