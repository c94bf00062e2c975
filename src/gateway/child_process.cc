#include "gateway/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace airlock::gateway {
namespace {

Status MakePipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("pipe2");
  read_end->Reset(fds[0]);
  write_end->Reset(fds[1]);
  return OkStatus();
}

// Child side after fork: only async-signal-safe calls. Reports errno of the
// failing step through `err_fd` and exits.
[[noreturn]] void ExecChild(const char* path, char* const argv[], char* const envp[], const char* cwd,
                            int in_fd, int out_fd, int err_fd_target, int report_fd) {
  auto fail = [report_fd]() {
    int e = errno;
    [[maybe_unused]] ssize_t n = write(report_fd, &e, sizeof e);
    _exit(127);
  };
  if (setpgid(0, 0) != 0) fail();
  // No PR_SET_PDEATHSIG: it fires when the *thread* that forked exits, and
  // connectors are spawned from short-lived threads. If airlock dies, the
  // server sees EOF on stdin, which is MCP's signal to exit.
  // Default dispositions and an empty mask for the new program.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd_target, 2) < 0) fail();
  // Close everything else except the report pipe (CLOEXEC) so no airlock fd leaks.
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != report_fd) close(fd);
  }
  syscall(SYS_close_range, 1024u, ~0u, 0u);
  if (cwd != nullptr && chdir(cwd) != 0) fail();
  execve(path, argv, envp);
  fail();
  _exit(127);
}

}  // namespace

std::string FindExecutable(const std::string& name, const std::string& path) {
  if (name.find('/') != std::string::npos) return name;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end > start ? path.substr(start, end - start) : std::string(".");
    const std::string candidate = dir + "/" + name;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const SpawnOptions& options) {
  const std::string path = FindExecutable(options.command, options.search_path);
  if (path.empty()) return NotFound("command not found in PATH");

  // Everything the child needs is built before fork.
  std::vector<std::string> argv_storage;
  argv_storage.push_back(options.command);
  argv_storage.insert(argv_storage.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = options.env;
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  UniqueFd in_r, in_w, out_r, out_w, err_r, err_w, report_r, report_w;
  AIRLOCK_RETURN_IF_ERROR(MakePipe(&in_r, &in_w));
  AIRLOCK_RETURN_IF_ERROR(MakePipe(&out_r, &out_w));
  AIRLOCK_RETURN_IF_ERROR(MakePipe(&report_r, &report_w));
  if (options.capture_stderr) {
    AIRLOCK_RETURN_IF_ERROR(MakePipe(&err_r, &err_w));
  } else {
    err_w.Reset(open("/dev/null", O_WRONLY | O_CLOEXEC));
    if (!err_w.valid()) return ErrnoError("open /dev/null");
  }

  const pid_t pid = fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    ExecChild(path.c_str(), argv.data(), envp.data(),
              options.cwd.empty() ? nullptr : options.cwd.c_str(), in_r.get(), out_w.get(), err_w.get(),
              report_w.get());
  }
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  // Also set the group from the parent side to avoid racing a kill(-pid).
  setpgid(pid, pid);
  report_w.Reset();
  in_r.Reset();
  out_w.Reset();
  err_w.Reset();

  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report_r.get(), &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    child->TerminateAndReap(std::chrono::milliseconds(0));
    return FailedPrecondition(std::string("cannot start the server: ") + strerror(child_errno));
  }
  child->stdin_ = std::move(in_w);
  child->stdout_ = std::move(out_r);
  child->stderr_ = std::move(err_r);
  return child;
}

// Waits (without reaping, so the process group id stays reserved) until the
// leader has exited or `budget` passes.
bool ChildProcess::WaitForExit(std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (true) {
    siginfo_t info{};
    int r = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid_) return true;
    if (r < 0 && errno != EINTR) return true;  // ECHILD: nothing to wait for
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int ChildProcess::TerminateAndReap(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return -1;
  CloseStdin();
  if (!WaitForExit(grace)) {
    kill(-pid_, SIGTERM);
    WaitForExit(std::chrono::milliseconds(500));
  }
  // The leader is gone or stubborn; either way the whole group goes now,
  // while the zombie leader still reserves the group id.
  kill(-pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return status;
}

ChildProcess::~ChildProcess() { TerminateAndReap(); }

}  // namespace airlock::gateway
