// Jail::StartInteractive and Jail::Turn: a program that stays running in its
// jail and is driven one turn at a time (sessions). See jail.h.
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>

#include "base/encoding.h"
#include "base/fd_passing.h"
#include "jail/channel.h"
#include "jail/jail.h"
#include "jail/jail_util.h"

namespace airlock::jail {

using namespace internal;  // NOLINT: src/jail's own helpers
using nlohmann::json;

namespace {

// One output stream of a turn: everything before the end marker, up to a
// cap. Bytes that could be the start of the marker are held back until the
// next read tells; bytes after the marker belong to no turn.
class MarkedStream {
 public:
  MarkedStream(const std::string& marker, uint64_t cap) : marker_(marker), cap_(cap) {}

  void Feed(const char* p, size_t n) {
    if (done_) return;
    held_.append(p, n);
    if (size_t pos = held_.find(marker_); pos != std::string::npos) {
      Emit(held_.data(), pos);
      held_.clear();
      done_ = true;
      return;
    }
    if (held_.size() >= marker_.size()) {
      const size_t keep = marker_.size() - 1;
      Emit(held_.data(), held_.size() - keep);
      held_.erase(0, held_.size() - keep);
    }
  }
  // No marker is coming (EOF, or the turn ended without it).
  void Finish() {
    if (!done_) Emit(held_.data(), held_.size());
    held_.clear();
    done_ = true;
  }
  bool done() const { return done_; }
  bool truncated() const { return truncated_; }
  std::string& data() { return data_; }

 private:
  void Emit(const char* p, size_t n) {
    const uint64_t room = cap_ > data_.size() ? cap_ - data_.size() : 0;
    data_.append(p, std::min<uint64_t>(room, n));
    if (n > room) truncated_ = true;
  }

  const std::string& marker_;
  const uint64_t cap_;
  std::string held_, data_;
  bool done_ = false, truncated_ = false;
};

// Reads and drops whatever `fd` (non-blocking) has now.
void DiscardAvailable(int fd) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    return;
  }
}

}  // namespace

StatusOr<json> Jail::Ask(const json& message) {
  AIRLOCK_RETURN_IF_ERROR(SendMessage(channel_.get(), message));
  for (;;) {
    AIRLOCK_RETURN_IF_ERROR(WaitReadable(channel_.get(), pidfd_.get(), kSetupTimeoutMs));
    AIRLOCK_ASSIGN_OR_RETURN(ChannelMessage reply, ReceiveMessage(channel_.get()));
    // Init's word that the interactive program ended comes whenever it did.
    if (reply.body.value("type", "") == "program_exited") {
      program_exited_ = true;
      continue;
    }
    return std::move(reply.body);
  }
}

Status Jail::StartInteractive(const ExecRequest& request) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair");
  UniqueFd ours(sv[0]), theirs(sv[1]);
  AIRLOCK_ASSIGN_OR_RETURN(Stdio io, Launch(request, theirs.get()));
  io.in_write.Reset();  // stdin is at EOF; each turn brings its own
  fcntl(ours.get(), F_SETFL, O_NONBLOCK);
  control_ = std::move(ours);
  started_stdio_ = std::move(io);
  interactive_ = true;
  return OkStatus();
}

TurnResult Jail::Turn(const TurnRequest& request, CancelToken* cancel) {
  TurnResult out;
  ExecResult& result = out.exec;
  if (!alive_ || !interactive_) {
    result.error = alive_ ? "no interactive program runs in this jail" : "the jail is no longer alive";
    return out;
  }
  if (request.end_marker.empty()) {
    result.error = "a turn needs an end marker";
    return out;
  }
  // Frozen between turns (a session): init and the program run again now.
  if (Status st = SetFrozen(false); !st.ok()) {
    result.error = "thawing the jail: " + st.message();
    Kill();
    return out;
  }
  if (Status st = MatchCallerPriority(); !st.ok()) {
    result.error = st.message();
    Kill();
    return out;
  }
  ScopedSigpipeBlock no_sigpipe;
  const int out_fd = started_stdio_.out_read.get();
  const int err_fd = started_stdio_.err_read.get();
  // What a background thread wrote between turns belongs to no turn.
  DiscardAvailable(out_fd);
  DiscardAvailable(err_fd);

  // Without files there is nothing for init to do before the turn.
  StatusOr<json> ready = request.files.empty()
                             ? StatusOr<json>(json{{"type", "turn_ready"}})
                             : Ask({{"type", "turn_begin"}, {"files", FilesMessage(request.files)}});
  if (!ready.ok()) {
    result.error = "jail init stopped answering: " + ready.status().message();
    Kill();
    return out;
  }
  if (ready->value("type", "") != "turn_ready") {
    // The files could not be written (a full /work, say): nothing ran.
    result.outcome = ExecResult::Outcome::kExecFailed;
    result.error = ready->value("message", std::string("the turn could not begin"));
    out.program_alive = true;
    return out;
  }

  const Limits& lim = request.limits;
  const auto start = Clock::now();
  const CgroupStats before = cgroup_ ? cgroup_->Stats() : CgroupStats{};
  UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
  UniqueFd timer = WallClockTimer(lim.wall_ms);

  enum Tag : uint64_t { kOut, kErr, kControl, kPid, kTimer, kCancel, kInit };
  auto add = [&](int fd, Tag tag, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev);
  };
  add(out_fd, kOut, EPOLLIN);
  add(err_fd, kErr, EPOLLIN);
  add(control_.get(), kControl, EPOLLIN | EPOLLOUT);
  add(pidfd_.get(), kPid, EPOLLIN);
  add(timer.get(), kTimer, EPOLLIN);
  add(channel_.get(), kInit, EPOLLIN);
  if (cancel != nullptr && cancel->fd() >= 0) add(cancel->fd(), kCancel, EPOLLIN);

  MarkedStream stdout_stream(request.end_marker, lim.max_stdout_bytes);
  MarkedStream stderr_stream(request.end_marker, lim.max_stderr_bytes);
  size_t sent = 0;
  std::string reply;
  bool killed = false, control_closed = false;
  char buf[65536];

  auto end_turn = [&](ExecResult::Outcome o, const std::string& why) {
    if (!killed) {
      result.outcome = o;
      result.error = why;
      killed = true;
      Kill();
    }
  };
  // Reads what `fd` has now into `stream`; false at EOF.
  auto drain = [&](int fd, MarkedStream& stream) -> bool {
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        stream.Feed(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd, nullptr);
        stream.Finish();
        return false;
      }
      if (errno == EINTR) continue;
      return true;
    }
  };
  auto over_cap = [&](MarkedStream& s, const char* name, uint64_t cap) {
    if (s.truncated() && lim.kill_on_output_limit) {
      end_turn(ExecResult::Outcome::kOutputLimit,
               std::string(name) + " exceeded the limit of " + std::to_string(cap) + " bytes");
    }
  };

  // The program ended (init said so): what it wrote is in the pipes now,
  // whoever else still holds them.
  bool gone = program_exited_;
  while (!killed && !out.replied && !control_closed && !gone) {
    epoll_event events[8];
    int n = epoll_wait(ep.get(), events, 8, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      end_turn(ExecResult::Outcome::kJailError, "epoll_wait failed");
      break;
    }
    for (int i = 0; i < n && !killed && !out.replied && !control_closed && !gone; ++i) {
      switch (events[i].data.u64) {
        case kOut:
          drain(out_fd, stdout_stream);
          over_cap(stdout_stream, "stdout", lim.max_stdout_bytes);
          break;
        case kErr:
          drain(err_fd, stderr_stream);
          over_cap(stderr_stream, "stderr", lim.max_stderr_bytes);
          break;
        case kControl: {
          if ((events[i].events & EPOLLOUT) && sent < request.message.size()) {
            ssize_t w = sent == 0 && request.pass_fd >= 0
                            ? SendWithFd(control_.get(), request.message.data(), request.message.size(), request.pass_fd)
                            : send(control_.get(), request.message.data() + sent, request.message.size() - sent,
                                   MSG_NOSIGNAL);
            if (w > 0) sent += static_cast<size_t>(w);
            if (w < 0 && errno != EAGAIN && errno != EINTR) control_closed = true;
            if (sent >= request.message.size()) {
              epoll_event ev{};
              ev.events = EPOLLIN;
              ev.data.u64 = kControl;
              epoll_ctl(ep.get(), EPOLL_CTL_MOD, control_.get(), &ev);
            }
          }
          if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
            for (;;) {
              ssize_t r = recv(control_.get(), buf, sizeof buf, 0);
              if (r > 0) {
                reply.append(buf, static_cast<size_t>(r));
                continue;
              }
              if (r == 0 || (errno != EAGAIN && errno != EINTR)) control_closed = true;
              if (r < 0 && errno == EINTR) continue;
              break;
            }
            if (size_t nl = reply.find('\n'); nl != std::string::npos) {
              reply.resize(nl);
              out.reply = reply;
              out.replied = true;
            } else if (reply.size() > request.max_reply_bytes) {
              end_turn(ExecResult::Outcome::kJailError, "the program's reply exceeded " +
                                                             std::to_string(request.max_reply_bytes) + " bytes");
            }
          }
          break;
        }
        case kPid:
          end_turn(ExecResult::Outcome::kJailError, "jail init died unexpectedly");
          break;
        case kInit: {
          StatusOr<ChannelMessage> m = ReceiveMessage(channel_.get());
          if (!m.ok()) {
            end_turn(ExecResult::Outcome::kJailError, "jail init stopped answering: " + m.status().message());
          } else if (m->body.value("type", "") == "program_exited") {
            program_exited_ = true;
            gone = true;
          }
          break;
        }
        case kTimer:
          end_turn(ExecResult::Outcome::kTimedOut, "wall-clock limit of " + std::to_string(lim.wall_ms) +
                                                       " ms exceeded");
          break;
        case kCancel:
          end_turn(ExecResult::Outcome::kCancelled, "cancelled");
          break;
      }
    }
  }
  if (!killed && control_closed && !out.replied && !program_exited_) {
    // Its control channel closed without a reply: the program is most
    // likely exiting. Init's word on it comes within moments; wait for it
    // (bounded) so the turn reports how it ended.
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    while (!program_exited_ && Clock::now() < deadline) {
      const int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
      if (!WaitReadable(channel_.get(), pidfd_.get(), std::max(left, 1)).ok()) break;
      StatusOr<ChannelMessage> m = ReceiveMessage(channel_.get());
      if (!m.ok()) break;
      if (m->body.value("type", "") == "program_exited") program_exited_ = true;
    }
  }
  result.wall_ms = MsSince(start);
  // The program wrote its markers before its reply: whatever is buffered now
  // is all of the turn's output (after a kill, still the program's output).
  drain(out_fd, stdout_stream);
  drain(err_fd, stderr_stream);
  stdout_stream.Finish();
  stderr_stream.Finish();
  result.stdout_data = std::move(stdout_stream.data());
  result.stderr_data = std::move(stderr_stream.data());
  result.stdout_truncated = stdout_stream.truncated();
  result.stderr_truncated = stderr_stream.truncated();
  if (!killed) over_cap(stdout_stream, "stdout", lim.max_stdout_bytes);
  if (!killed) over_cap(stderr_stream, "stderr", lim.max_stderr_bytes);
  auto stats = [&] { FillCgroupUsage(cgroup_.get(), before, &result); };
  if (killed) {
    stats();
    return out;
  }

  StatusOr<json> done = Ask({{"type", "turn_end"},
                             {"output_globs", request.output_globs},
                             {"max_output_files", request.max_output_files},
                             {"max_output_file_bytes", request.max_output_file_bytes},
                             {"max_output_files_total_bytes", request.max_output_files_total_bytes}});
  stats();
  if (!done.ok() || done->value("type", "") != "turn_done") {
    end_turn(ExecResult::Outcome::kJailError,
             "jail init failed to end the turn: " +
                 (done.ok() ? done->value("message", std::string("unexpected reply")) : done.status().message()));
    return out;
  }
  out.program_alive = done->value("alive", false);
  ReadCollectedFiles(*done, &result);
  if (!out.program_alive) {
    result.exit_code = done->value("exit_code", -1);
    result.signal = done->value("signal", 0);
    result.outcome = result.signal ? ExecResult::Outcome::kSignaled : ExecResult::Outcome::kExited;
    interactive_ = false;
    Kill();
    return out;
  }
  if (!out.replied) {
    // Still running, but it closed its end of the control channel: it can
    // never be driven again.
    end_turn(ExecResult::Outcome::kJailError, "the program closed its control channel");
    out.program_alive = false;
    return out;
  }
  result.outcome = ExecResult::Outcome::kExited;
  result.exit_code = 0;
  return out;
}

}  // namespace airlock::jail
