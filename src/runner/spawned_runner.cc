#include "runner/spawned_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

namespace airlock::runner {
namespace {

// Raw syscalls: glibc 2.36's <sys/pidfd.h> lacks C++ linkage guards.
int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSendSignal(int pidfd, int sig) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

}  // namespace

SpawnedRunner::SpawnedRunner(UniqueFd channel, pid_t pid)
    : channel_(std::move(channel)), pid_(pid), reaped_(pid <= 0) {
  if (pid > 0) pidfd_.Reset(PidfdOpen(pid));  // pidfds are always CLOEXEC
}

SpawnedRunner SpawnedRunner::Linked(UniqueFd channel, std::shared_ptr<void> link,
                                    std::function<std::string()> describe_loss) {
  SpawnedRunner r(std::move(channel), -1);
  r.link_ = std::move(link);
  r.describe_loss_ = std::move(describe_loss);
  return r;
}

SpawnedRunner::~SpawnedRunner() { Reset(); }

SpawnedRunner::SpawnedRunner(SpawnedRunner&& other) noexcept
    : channel_(std::move(other.channel_)),
      pidfd_(std::move(other.pidfd_)),
      pid_(std::exchange(other.pid_, -1)),
      reaped_(std::exchange(other.reaped_, true)),
      wait_status_(other.wait_status_),
      link_(std::move(other.link_)),
      describe_loss_(std::move(other.describe_loss_)) {}

SpawnedRunner& SpawnedRunner::operator=(SpawnedRunner&& other) noexcept {
  if (this != &other) {
    Reset();
    channel_ = std::move(other.channel_);
    pidfd_ = std::move(other.pidfd_);
    pid_ = std::exchange(other.pid_, -1);
    reaped_ = std::exchange(other.reaped_, true);
    wait_status_ = other.wait_status_;
    link_ = std::move(other.link_);
    describe_loss_ = std::move(other.describe_loss_);
  }
  return *this;
}

std::optional<int> SpawnedRunner::WaitFor(std::chrono::milliseconds timeout) {
  if (reaped_) return wait_status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      wait_status_ = status;
      pidfd_.Reset();
      return status;
    }
    if (r < 0 && errno != EINTR) {  // ECHILD: someone else reaped it
      reaped_ = true;
      pidfd_.Reset();
      return wait_status_;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    const int left_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    if (pidfd_.valid()) {
      pollfd p{pidfd_.get(), POLLIN, 0};
      poll(&p, 1, left_ms);  // readable once the child exits
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(left_ms, 10)));
    }
  }
}

void SpawnedRunner::Kill() {
  if (reaped_) return;
  // Until we reap it the pid cannot be recycled, so kill() is safe too.
  if (!pidfd_.valid() || PidfdSendSignal(pidfd_.get(), SIGKILL) != 0) {
    kill(pid_, SIGKILL);
  }
}

void SpawnedRunner::Reset() {
  channel_.Reset();
  link_.reset();  // a link's destructor cancels its stream and joins its pumps
  if (!reaped_) {
    Kill();
    while (!WaitFor(std::chrono::milliseconds(1000))) Kill();
  }
  pidfd_.Reset();
  pid_ = -1;
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFSIGNALED(wait_status)) return "signal " + std::to_string(WTERMSIG(wait_status));
  if (WIFEXITED(wait_status)) return "exit code " + std::to_string(WEXITSTATUS(wait_status));
  return "wait status " + std::to_string(wait_status);
}

StatusOr<SpawnedRunner> SpawnRunnerProcess(const std::string& executable,
                                            const std::vector<std::string>& extra_args) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return ErrnoError("socketpair for the runner channel");
  }
  UniqueFd parent_end(sv[0]);
  UniqueFd child_end(sv[1]);
  if (child_end.get() <= STDERR_FILENO) {  // keep it clear of the stdio slots
    child_end.Reset(fcntl(child_end.get(), F_DUPFD_CLOEXEC, 3));
    if (!child_end.valid()) return ErrnoError("fcntl(F_DUPFD_CLOEXEC)");
  }
  UniqueFd dev_null(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!dev_null.valid()) return ErrnoError("open /dev/null");

  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls are allowed (other threads may hold locks).
  const std::string fd_arg = std::to_string(child_end.get());
  std::vector<std::string> args = {executable, "runner", "--channel-fd", fd_arg};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string path_env = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path_env.data(), nullptr};
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork the runner");
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(126);
    if (getppid() != parent) _exit(126);  // the server died before prctl
    if (dup2(dev_null.get(), STDIN_FILENO) < 0 || dup2(dev_null.get(), STDOUT_FILENO) < 0) {
      _exit(126);
    }
    if (fcntl(child_end.get(), F_SETFD, 0) != 0) _exit(126);  // the one inherited fd
    // Close whatever else we may have inherited without CLOEXEC from our own
    // parent (a CI harness, a shell): the runner gets stdio and the channel.
    const unsigned keep = static_cast<unsigned>(child_end.get());
    if (keep > 3) syscall(SYS_close_range, 3u, keep - 1, 0u);
    syscall(SYS_close_range, keep + 1, ~0u, 0u);
    execve(executable.c_str(), argv.data(), envp);
    _exit(127);
  }
  return SpawnedRunner(std::move(parent_end), pid);
}

}  // namespace airlock::runner
