#include "jail/jail.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>

#include "base/encoding.h"
#include "jail/channel.h"
#include "jail/host.h"
#include "jail/init/jail_fs.h"
#include "jail/jail_util.h"

namespace airlock::jail {
namespace {

using namespace internal;  // NOLINT: jail_util.h is this file's own helpers

using nlohmann::json;

constexpr int kSandboxUid = 65534;

// Binds at another place (BindMount::target) whose source the child opens
// for init (fds kFirstBindFd, kFirstBindFd + 1, ...): see JailChildMain.
constexpr int kMaxFdBinds = 16;
constexpr int kFirstBindFd = 5;

struct CloneArgs {
  int channel_fd;
  int init_fd;
  bool privileged;
  const char* bind_paths[kMaxFdBinds];
  int bind_count;
};

// Runs in the cloned child, already inside the new namespaces. The parent
// may be multi-threaded, so only async-signal-safe calls from here to exec.
int JailChildMain(void* raw) {
  const auto* args = static_cast<const CloneArgs*>(raw);
  // If the supervisor dies before it releases us, so do we (getppid() is 0
  // here, in a new pid namespace, so a death before this prctl is caught
  // by the read below instead).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Nothing of the supervisor's but our two fds stays open. An inherited
  // copy of its channel to the gateway would hide its death from the
  // gateway (no EOF) for as long as we live, and one of the socketpair's
  // other end would keep the read below from ever seeing EOF.
  {
    const unsigned lo = static_cast<unsigned>(std::min(args->channel_fd, args->init_fd));
    const unsigned hi = static_cast<unsigned>(std::max(args->channel_fd, args->init_fd));
    if (lo > 3) syscall(SYS_close_range, 3u, lo - 1, 0);
    if (hi > lo + 1) syscall(SYS_close_range, lo + 1, hi - 1, 0);
    syscall(SYS_close_range, hi + 1, ~0U, 0);
  }
  char go = 0;
  ssize_t n;
  do {
    n = read(args->channel_fd, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1 || go != 'G') _exit(1);
  // The sources of the mapped binds (e.g. airlock-js), opened here: still
  // with the supervisor's file owner identity (the uid change is next), so
  // init, which runs as an unprivileged mapped uid, needs no search
  // permission on their parent directories, and in this mount namespace,
  // which a bind's source must belong to. Init binds each from
  // /proc/self/fd/N and closes it before anything else runs.
  int bind_fds[kMaxFdBinds];
  for (int i = 0; i < args->bind_count; ++i) {
    bind_fds[i] = -1;
    int fd = open(args->bind_paths[i], O_PATH | O_CLOEXEC);
    if (fd >= 0) {
      bind_fds[i] = fcntl(fd, F_DUPFD_CLOEXEC, 100);
      close(fd);
    }
  }
  // Raw syscalls, not glibc's wrappers: in a process that ever had threads
  // those broadcast the change to every thread of the parent (which this
  // clone does not have) and would wait forever.
  if (args->privileged && syscall(SYS_setgroups, 0, nullptr) != 0) _exit(2);
  if (syscall(SYS_setresgid, 0, 0, 0) != 0 || syscall(SYS_setresuid, 0, 0, 0) != 0) _exit(3);
  // After the credential change (which clears it): die with the supervisor.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int null_fd = open("/dev/null", O_RDWR);
  if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(null_fd, 1) < 0) _exit(4);
  int ch = fcntl(args->channel_fd, F_DUPFD, 10);
  int init = fcntl(args->init_fd, F_DUPFD_CLOEXEC, 10);
  if (ch < 0 || init < 0 || dup2(ch, 3) < 0 || dup2(init, 4) < 0) _exit(5);
  fcntl(4, F_SETFD, FD_CLOEXEC);
  for (int i = 0; i < args->bind_count; ++i) {
    if (bind_fds[i] < 0) {
      close(kFirstBindFd + i);  // init then binds by path (and reports why that fails)
    } else if (dup2(bind_fds[i], kFirstBindFd + i) < 0) {
      _exit(6);
    }
  }
  syscall(SYS_close_range, kFirstBindFd + args->bind_count, ~0U, 0);
  char name[] = "airlock-init";
  char* argv[] = {name, nullptr};
  char* envp[] = {nullptr};
  syscall(SYS_execveat, 4, "", argv, envp, AT_EMPTY_PATH);
  _exit(127);
}

Status WriteProc(pid_t pid, const char* file, const std::string& content) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open " + path);
  if (write(fd.get(), content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
    return ErrnoError("write " + path);
  }
  return OkStatus();
}






}  // namespace

const char* OutcomeName(ExecResult::Outcome o) {
  switch (o) {
    case ExecResult::Outcome::kExited: return "exited";
    case ExecResult::Outcome::kSignaled: return "signaled";
    case ExecResult::Outcome::kTimedOut: return "timed_out";
    case ExecResult::Outcome::kOutputLimit: return "output_limit";
    case ExecResult::Outcome::kCancelled: return "cancelled";
    case ExecResult::Outcome::kExecFailed: return "exec_failed";
    case ExecResult::Outcome::kJailError: return "jail_error";
  }
  return "unknown";
}

StatusOr<std::unique_ptr<Jail>> Jail::Create(JailHost& host, const JailConfig& config) {
  std::unique_ptr<Jail> jail(new Jail());
  jail->host_ = &host;
  jail->config_ = config;

  AIRLOCK_ASSIGN_OR_RETURN(JailHost::Identity id, host.AcquireIdentity());
  jail->uid_slot_ = id.slot;

  if (host.cgroups() != nullptr) {
    CgroupLimits cl;
    cl.memory_bytes = config.limits.memory_bytes;
    cl.max_pids = config.limits.max_pids;
    cl.cpu_quota_percent = config.limits.cpu_quota_percent;
    AIRLOCK_ASSIGN_OR_RETURN(jail->cgroup_, host.cgroups()->CreateCgroup(host.NextJailName(), cl));
  }

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair");
  UniqueFd parent_end(sv[0]);
  UniqueFd child_end(sv[1]);

  CloneArgs args{child_end.get(), host.init_fd(), host.privileged(), {}, 0};
  for (const BindMount& b : config.binds) {
    if (b.target.empty()) continue;
    if (args.bind_count == kMaxFdBinds) return InvalidArgument("too many mapped binds (at most 16)");
    args.bind_paths[args.bind_count++] = b.path.c_str();
  }
  constexpr size_t kStackSize = 256 * 1024;
  void* stack = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return ErrnoError("mmap clone stack");
  int pidfd = -1;
  const int flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC |
                    CLONE_NEWUTS | CLONE_PIDFD | SIGCHLD;
  pid_t pid = clone(JailChildMain, static_cast<char*>(stack) + kStackSize, flags, &args, &pidfd);
  const int clone_errno = errno;
  munmap(stack, kStackSize);
  if (pid < 0) return ErrnoError("clone jail namespaces", clone_errno);
  jail->init_pid_ = pid;
  jail->pidfd_.Reset(pidfd);
  jail->alive_ = true;
  child_end.Reset();

  // From here on, any failure destroys the half-built jail via ~Jail.
  const std::string uid_map = "0 " + std::to_string(id.uid) + " 1\n";
  const std::string gid_map = "0 " + std::to_string(id.gid) + " 1\n";
  if (!host.privileged()) AIRLOCK_RETURN_IF_ERROR(WriteProc(pid, "setgroups", "deny"));
  AIRLOCK_RETURN_IF_ERROR(WriteProc(pid, "uid_map", uid_map));
  AIRLOCK_RETURN_IF_ERROR(WriteProc(pid, "gid_map", gid_map));
  if (write(parent_end.get(), "G", 1) != 1) return ErrnoError("release jail child");
  // While the child execs airlock-init and builds the filesystem: joining
  // the cgroup, whose first write waits for an RCU grace period on cgroup
  // v1 (5-15 ms here). Init starts no process before "ready" is read below,
  // so everything the jail ever runs is inside it; only init's own set-up
  // is charged to the supervisor's cgroup.
  if (jail->cgroup_) AIRLOCK_RETURN_IF_ERROR(jail->cgroup_->AddProcess(pid));

  std::vector<std::string> ro = BaseReadOnlyPaths();
  json required = json::array(), optional = json::array();
  for (const auto& p : ro) optional.push_back(p);
  json mapped = json::array();
  for (const auto& b : config.binds) {
    if (!b.target.empty()) {
      mapped.push_back({b.path, b.target});
    } else {
      (b.optional ? optional : required).push_back(b.path);
    }
  }
  json setup = {{"type", "setup"},
                {"ro_paths", required},
                {"optional_paths", optional},
                {"mapped_paths", mapped},
                {"mapped_fds_from", kFirstBindFd},
                {"work_bytes", config.limits.workdir_bytes},
                {"work_inodes", config.limits.workdir_inodes},
                {"hostname", config.hostname},
                {"sandbox_uid", kSandboxUid}};
  AIRLOCK_RETURN_IF_ERROR(SendMessage(parent_end.get(), setup));
  AIRLOCK_RETURN_IF_ERROR(WaitReadable(parent_end.get(), jail->pidfd_.get(), kSetupTimeoutMs));
  AIRLOCK_ASSIGN_OR_RETURN(ChannelMessage ready, ReceiveMessage(parent_end.get()));
  if (ready.body.value("type", "") != "ready") {
    return Internal("jail setup failed: " + ready.body.value("message", std::string("unknown error")));
  }
  jail->channel_ = std::move(parent_end);
  return jail;
}

Jail::~Jail() {
  Kill();
  cgroup_.reset();
  if (host_ != nullptr) host_->ReleaseIdentity(uid_slot_);
}

bool Jail::Usable() const {
  if (!alive_ || reaped_ || init_pid_ <= 0) return false;
  siginfo_t si{};
  // WNOWAIT: only look; the reaping stays with Kill().
  if (waitid(P_PID, static_cast<id_t>(init_pid_), &si, WEXITED | WNOHANG | WNOWAIT | __WALL) != 0 || si.si_pid != 0) {
    return false;
  }
  if (!started_) return true;
  pollfd fds[2] = {{started_stdio_.out_read.get(), POLLIN, 0}, {started_stdio_.err_read.get(), POLLIN, 0}};
  if (poll(fds, 2, 0) < 0) return false;
  // POLLHUP on both: every write end of stdout and stderr is closed, so the
  // program and anything it started are gone. (A program may redirect one of
  // them; output written while waiting is no reason to refuse either: a cold
  // run would have written it too.)
  constexpr short kGone = POLLHUP | POLLERR | POLLNVAL;
  return !((fds[0].revents & kGone) && (fds[1].revents & kGone));
}

void Jail::Kill() {
  if (init_pid_ > 0 && !reaped_) {
    if (pidfd_) {
      syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
    } else {
      kill(init_pid_, SIGKILL);
    }
    // PID 1 dying takes the whole PID namespace with it; the wait returns
    // once every process of the jail is gone. The cgroup sweep is a backstop.
    // A frozen task takes its SIGKILL only once thawed (cgroup v1).
    if (frozen_ && cgroup_) (void)cgroup_->SetFrozen(false);
    frozen_ = false;
    while (waitpid(init_pid_, nullptr, __WALL) < 0 && errno == EINTR) {}
    if (cgroup_) (void)cgroup_->KillAll();
    reaped_ = true;
  }
  alive_ = false;
  interactive_ = false;
  channel_.Reset();
  control_.Reset();
  started_bridge_.Reset();
}

Status Jail::SetFrozen(bool frozen) {
  if (frozen == frozen_) return OkStatus();
  if (!alive_) return FailedPrecondition("the jail is no longer alive");
  if (!cgroup_) return FailedPrecondition("the jail has no cgroup to freeze");
  AIRLOCK_RETURN_IF_ERROR(cgroup_->SetFrozen(frozen));
  frozen_ = frozen;
  return OkStatus();
}

StatusOr<Jail::Stdio> Jail::MakeStdio(size_t stdin_bytes) {
  Stdio io;
  for (auto [r, w] : {std::pair{&io.in_read, &io.in_write}, std::pair{&io.out_read, &io.out_write},
                      std::pair{&io.err_read, &io.err_write}}) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return ErrnoError("pipe");
    r->Reset(p[0]);
    w->Reset(p[1]);
  }
  fcntl(io.in_write.get(), F_SETFL, O_NONBLOCK);
  fcntl(io.out_read.get(), F_SETFL, O_NONBLOCK);
  fcntl(io.err_read.get(), F_SETFL, O_NONBLOCK);
  fcntl(io.out_read.get(), F_SETPIPE_SZ, 1 << 20);
  if (stdin_bytes > 65536) fcntl(io.in_write.get(), F_SETPIPE_SZ, 1 << 20);
  return io;
}

Status Jail::MatchCallerPriority() {
  if (!cgroup_) return OkStatus();  // no way to list the threads; a pool without cgroups never lowers it
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  if (errno != 0) return ErrnoError("getpriority");
  // A pre-started interpreter may still be starting threads (node's
  // platform workers) from threads that have the pool's lower priority: a
  // thread cloned while its parent is changed keeps the old value and shows
  // in the cgroup only after the listing. So list again until a pass finds
  // nothing to change; every later thread descends from one at `nice`.
  constexpr int kMaxPasses = 16;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    AIRLOCK_ASSIGN_OR_RETURN(std::vector<pid_t> threads, cgroup_->Threads());
    bool changed = false;
    for (pid_t tid : threads) {
      errno = 0;
      const int current = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
      if (errno == ESRCH || current == nice) continue;  // gone meanwhile, or already right
      if (setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice) != 0) {
        if (errno == ESRCH) continue;
        return ErrnoError("setpriority of jail thread " + std::to_string(tid));
      }
      changed = true;
    }
    if (!changed) return OkStatus();
  }
  return OkStatus();  // still spawning after kMaxPasses; what was listed has the run's priority
}

ExecResult Jail::Exec(const ExecRequest& request, CancelToken* cancel) {
  ExecResult result;
  if (!alive_ || started_ || interactive_) {
    result.error = alive_ ? "a started program is waiting in this jail" : "the jail is no longer alive";
    return result;
  }
  if (request.seccomp == nullptr || request.seccomp->instructions.empty()) {
    result.error = "no seccomp policy given; refusing to run unfiltered";
    return result;
  }
  if (Status st = MatchCallerPriority(); !st.ok()) {
    result.error = st.message();
    return result;
  }
  StatusOr<Stdio> io = MakeStdio(request.stdin_data.size());
  if (!io.ok()) {
    result.error = io.status().message();
    return result;
  }
  json msg = ProgramMessage("exec", request);
  msg["files"] = FilesMessage(request.files);
  msg["output_globs"] = request.output_globs;
  msg["max_output_files"] = request.max_output_files;
  msg["max_output_file_bytes"] = request.max_output_file_bytes;
  msg["max_output_files_total_bytes"] = request.max_output_files_total_bytes;
  std::vector<int> fds = {io->in_read.get(), io->out_write.get(), io->err_write.get()};
  if (request.bridge_fd >= 0) fds.push_back(request.bridge_fd);
  Status sent = SendMessage(channel_.get(), msg, fds);
  io->in_read.Reset();
  io->out_write.Reset();
  io->err_write.Reset();
  if (!sent.ok()) {
    result.error = "sending the program to the jail: " + sent.message();
    Kill();
    return result;
  }
  return Supervise(request.limits, request.stdin_data, std::move(*io), cancel);
}

StatusOr<Jail::Stdio> Jail::Launch(const ExecRequest& request, int control_fd, bool bridged) {
  if (!alive_) return FailedPrecondition("the jail is no longer alive");
  if (started_ || interactive_) return FailedPrecondition("a program is already started in this jail");
  if (request.seccomp == nullptr || request.seccomp->instructions.empty()) {
    return InvalidArgument("no seccomp policy given; refusing to run unfiltered");
  }
  if (!request.stdin_data.empty() || !request.files.empty() || !request.output_globs.empty() ||
      request.bridge_fd >= 0) {
    return InvalidArgument("a started program gets its stdin, files and outputs later (Resume, Turn)");
  }
  AIRLOCK_ASSIGN_OR_RETURN(Stdio io, MakeStdio(0));
  std::vector<int> fds = {io.in_read.get(), io.out_write.get(), io.err_write.get()};
  if (control_fd >= 0) fds.push_back(control_fd);
  json msg = ProgramMessage("start", request);
  if (bridged) msg["bridged"] = true;
  Status sent = SendMessage(channel_.get(), msg, fds);
  io.in_read.Reset();
  io.out_write.Reset();
  io.err_write.Reset();
  if (!sent.ok()) {
    Kill();
    return Internal("sending the program to the jail: " + sent.message());
  }
  Status ready = WaitReadable(channel_.get(), pidfd_.get(), kSetupTimeoutMs);
  StatusOr<ChannelMessage> reply = ready.ok() ? ReceiveMessage(channel_.get()) : StatusOr<ChannelMessage>(ready);
  if (!reply.ok()) {
    Kill();
    return Internal("jail init stopped answering: " + reply.status().message());
  }
  if (reply->body.value("type", "") != "started") {
    return FailedPrecondition("the program could not be started: " +
                              reply->body.value("message", std::string("unknown error")));
  }
  return io;
}

Status Jail::Start(const ExecRequest& request) {
  AIRLOCK_ASSIGN_OR_RETURN(Stdio io, Launch(request, -1));
  started_ = true;
  started_stdio_ = std::move(io);
  return OkStatus();
}

Status Jail::StartBridged(const ExecRequest& request) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair");
  UniqueFd ours(sv[0]), theirs(sv[1]);
  AIRLOCK_ASSIGN_OR_RETURN(Stdio io, Launch(request, theirs.get(), /*bridged=*/true));
  started_ = true;
  started_stdio_ = std::move(io);
  started_bridge_ = std::move(ours);
  return OkStatus();
}

ExecResult Jail::Resume(const ResumeRequest& request, CancelToken* cancel) {
  ExecResult result;
  if (!alive_ || !started_) {
    result.error = alive_ ? "no program is started in this jail" : "the jail is no longer alive";
    return result;
  }
  if (Status st = MatchCallerPriority(); !st.ok()) {
    result.error = st.message();
    Kill();
    return result;
  }
  started_ = false;
  Stdio io = std::move(started_stdio_);
  if (request.stdin_data.size() > 65536) fcntl(io.in_write.get(), F_SETPIPE_SZ, 1 << 20);
  json msg = {{"type", "resume"},
              {"args", request.args},
              {"files", FilesMessage(request.files)},
              {"cpu_seconds", CpuSeconds(request.limits)},
              {"output_globs", request.output_globs},
              {"max_output_files", request.max_output_files},
              {"max_output_file_bytes", request.max_output_file_bytes},
              {"max_output_files_total_bytes", request.max_output_files_total_bytes}};
  if (Status sent = SendMessage(channel_.get(), msg); !sent.ok()) {
    result.error = "sending the input to the jail: " + sent.message();
    Kill();
    return result;
  }
  return Supervise(request.limits, request.stdin_data, std::move(io), cancel);
}

ExecResult Jail::Supervise(const Limits& lim, const std::string& stdin_data, Stdio io, CancelToken* cancel) {
  ExecResult result;
  UniqueFd& out_r = io.out_read;
  UniqueFd& err_r = io.err_read;
  UniqueFd& in_w = io.in_write;
  ScopedSigpipeBlock no_sigpipe;
  size_t stdin_off = 0;
  const auto start = Clock::now();
  const CgroupStats before = cgroup_ ? cgroup_->Stats() : CgroupStats{};

  UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
  UniqueFd timer = WallClockTimer(lim.wall_ms);

  enum Tag : uint64_t { kOut, kErr, kChannel, kPid, kTimer, kCancel, kIn };
  auto add = [&](int fd, Tag tag) {
    epoll_event ev{};
    ev.events = tag == kIn ? EPOLLOUT : EPOLLIN;
    ev.data.u64 = tag;
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev);
  };
  add(out_r.get(), kOut);
  add(err_r.get(), kErr);
  add(channel_.get(), kChannel);
  add(pidfd_.get(), kPid);
  add(timer.get(), kTimer);
  if (cancel != nullptr && cancel->fd() >= 0) add(cancel->fd(), kCancel);
  if (stdin_data.empty()) {
    in_w.Reset();  // EOF at once
  } else {
    add(in_w.get(), kIn);
  }

  bool out_open = true, err_open = true, exited = false;
  bool killed = false;
  json exit_msg;
  char buf[65536];

  // Reads what is available from one pipe; returns false once it hit EOF.
  auto drain = [&](UniqueFd& fd, std::string& sink, uint64_t cap, bool& truncated) -> bool {
    for (;;) {
      ssize_t n = read(fd.get(), buf, sizeof buf);
      if (n > 0) {
        const uint64_t room = cap > sink.size() ? cap - sink.size() : 0;
        sink.append(buf, std::min<uint64_t>(room, static_cast<uint64_t>(n)));
        if (static_cast<uint64_t>(n) > room) {
          truncated = true;
          if (lim.kill_on_output_limit) return true;
        }
        continue;
      }
      if (n == 0) {
        epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd.get(), nullptr);
        return false;
      }
      if (errno == EINTR) continue;
      return true;  // EAGAIN
    }
  };
  auto end_run = [&](ExecResult::Outcome o, const std::string& why) {
    if (!killed) {
      result.outcome = o;
      result.error = why;
      killed = true;
      Kill();
    }
  };

  while (!killed && (!exited || out_open || err_open)) {
    epoll_event events[8];
    int timeout = exited ? 2000 : -1;  // after exit: pipes close at once (init killed all)
    int n = epoll_wait(ep.get(), events, 8, timeout);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (int i = 0; i < n && !killed; ++i) {
      switch (events[i].data.u64) {
        case kOut:
          out_open = drain(out_r, result.stdout_data, lim.max_stdout_bytes, result.stdout_truncated);
          if (result.stdout_truncated && lim.kill_on_output_limit)
            end_run(ExecResult::Outcome::kOutputLimit,
                    "stdout exceeded the limit of " + std::to_string(lim.max_stdout_bytes) + " bytes");
          break;
        case kErr:
          err_open = drain(err_r, result.stderr_data, lim.max_stderr_bytes, result.stderr_truncated);
          if (result.stderr_truncated && lim.kill_on_output_limit)
            end_run(ExecResult::Outcome::kOutputLimit,
                    "stderr exceeded the limit of " + std::to_string(lim.max_stderr_bytes) + " bytes");
          break;
        case kChannel: {
          StatusOr<ChannelMessage> m = ReceiveMessage(channel_.get());
          if (!m.ok()) {
            end_run(ExecResult::Outcome::kJailError, "jail init stopped answering: " + m.status().message());
            break;
          }
          if (m->body.value("type", "") == "exited") {
            exit_msg = std::move(m->body);
            exited = true;
            epoll_ctl(ep.get(), EPOLL_CTL_DEL, channel_.get(), nullptr);
            epoll_ctl(ep.get(), EPOLL_CTL_DEL, timer.get(), nullptr);
          }
          break;
        }
        case kPid:
          end_run(ExecResult::Outcome::kJailError, "jail init died unexpectedly");
          break;
        case kTimer:
          end_run(ExecResult::Outcome::kTimedOut,
                  "wall-clock limit of " + std::to_string(lim.wall_ms) + " ms exceeded");
          break;
        case kCancel:
          end_run(ExecResult::Outcome::kCancelled, "cancelled");
          break;
        case kIn:
          // Feeds stdin as the pipe has room; a program that exits without
          // reading it all just never sees the rest (EPIPE).
          while (stdin_off < stdin_data.size()) {
            ssize_t w = write(in_w.get(), stdin_data.data() + stdin_off, stdin_data.size() - stdin_off);
            if (w > 0) {
              stdin_off += static_cast<size_t>(w);
            } else if (w < 0 && errno == EINTR) {
              continue;
            } else {
              if (errno != EAGAIN) stdin_off = stdin_data.size();
              break;
            }
          }
          if (stdin_off >= stdin_data.size()) {
            epoll_ctl(ep.get(), EPOLL_CTL_DEL, in_w.get(), nullptr);
            in_w.Reset();
          }
          break;
      }
    }
  }
  result.wall_ms = MsSince(start);
  // Whatever is still buffered after a kill is still the program's output.
  if (out_open) drain(out_r, result.stdout_data, lim.max_stdout_bytes, result.stdout_truncated);
  if (err_open) drain(err_r, result.stderr_data, lim.max_stderr_bytes, result.stderr_truncated);

  FillCgroupUsage(cgroup_.get(), before, &result);
  if (killed) return result;
  if (!exited) {
    end_run(ExecResult::Outcome::kJailError, "jail stopped without reporting the program's exit");
    return result;
  }
  if (exit_msg.contains("exec_error") && exit_msg["exec_error"].is_string()) {
    result.outcome = ExecResult::Outcome::kExecFailed;
    result.error = exit_msg["exec_error"].get<std::string>();
    return result;
  }
  result.exit_code = exit_msg.value("exit_code", -1);
  result.signal = exit_msg.value("signal", 0);
  result.outcome = result.signal ? ExecResult::Outcome::kSignaled : ExecResult::Outcome::kExited;
  if (result.cpu_ms == 0) result.cpu_ms = exit_msg.value("cpu_ms", 0ull);
  ReadCollectedFiles(exit_msg, &result);
  return result;
}

}  // namespace airlock::jail
