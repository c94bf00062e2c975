#include "jail/init/program.h"

#include <dirent.h>

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>

namespace airlock::jail {
namespace {

// Reports `stage` and errno to the parent over `err_fd`, then exits.
[[noreturn]] void Fail(int err_fd, const char* stage) {
  int err = errno;
  char buf[256];
  int n = snprintf(buf, sizeof buf, "%s: %s", stage, strerror(err));
  if (n > 0) [[maybe_unused]] ssize_t w = write(err_fd, buf, static_cast<size_t>(n));
  _exit(127);
}

bool WriteProcFile(const char* path, const char* content) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, content, strlen(content)) == static_cast<ssize_t>(strlen(content));
  close(fd);
  return ok;
}

void DropAllCapabilities() {
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  syscall(SYS_capset, &header, data);
}

[[noreturn]] void ChildMain(const ProgramSpec& spec, int err_fd) {
  if (setsid() < 0) Fail(err_fd, "setsid");
  // stdio: dup into 0..2, then move the error pipe to 3 and close the rest.
  int fds[3] = {spec.stdin_fd, spec.stdout_fd, spec.stderr_fd};
  int high[3];
  for (int i = 0; i < 3; ++i) {
    high[i] = fcntl(fds[i], F_DUPFD, 10);
    if (high[i] < 0) Fail(err_fd, "dup stdio");
  }
  int err_high = fcntl(err_fd, F_DUPFD_CLOEXEC, 20);
  int bridge_high = spec.bridge_fd >= 0 ? fcntl(spec.bridge_fd, F_DUPFD, 20) : -1;
  if (spec.bridge_fd >= 0 && bridge_high < 0) Fail(err_high, "dup bridge");
  const bool with_resume = bridge_high >= 0 && spec.resume_fd >= 0;
  int resume_high = with_resume ? fcntl(spec.resume_fd, F_DUPFD, 20) : -1;
  if (with_resume && resume_high < 0) Fail(err_high, "dup resume");
  for (int i = 0; i < 3; ++i) {
    if (dup2(high[i], i) < 0) Fail(err_high, "dup2 stdio");
  }
  // fd 3 is the bridge when there is one, fd 4 the resume pipe beside it
  // (both inherited by exec); the error pipe sits above them and closes on
  // exec.
  const int err_target = bridge_high < 0 ? 3 : with_resume ? 5 : 4;
  if (bridge_high >= 0 && dup2(bridge_high, 3) < 0) Fail(err_high, "dup2 bridge");
  if (with_resume && dup2(resume_high, 4) < 0) Fail(err_high, "dup2 resume");
  if (dup2(err_high, err_target) < 0) Fail(err_high, "dup2 error pipe");
  err_fd = err_target;
  fcntl(err_fd, F_SETFD, FD_CLOEXEC);
  syscall(SYS_close_range, err_target + 1, ~0U, 0);

  // A nested user namespace in which the program is an ordinary user with
  // no capabilities over anything the jail owns.
  if (unshare(CLONE_NEWUSER) != 0) Fail(err_fd, "unshare user namespace");
  char map[64];
  snprintf(map, sizeof map, "%u 0 1\n", spec.sandbox_uid);
  if (!WriteProcFile("/proc/self/setgroups", "deny")) Fail(err_fd, "setgroups deny");
  if (!WriteProcFile("/proc/self/uid_map", map)) Fail(err_fd, "uid_map");
  if (!WriteProcFile("/proc/self/gid_map", map)) Fail(err_fd, "gid_map");
  if (setresgid(spec.sandbox_uid, spec.sandbox_uid, spec.sandbox_uid) != 0) Fail(err_fd, "setresgid");
  if (setresuid(spec.sandbox_uid, spec.sandbox_uid, spec.sandbox_uid) != 0) Fail(err_fd, "setresuid");
  DropAllCapabilities();

  auto set_limit = [&](int resource, rlim_t soft, rlim_t hard, const char* what) {
    rlimit rl{soft, hard};
    if (setrlimit(resource, &rl) != 0) Fail(err_fd, what);
  };
  set_limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
  if (spec.cpu_seconds) set_limit(RLIMIT_CPU, spec.cpu_seconds, spec.cpu_seconds + 1, "RLIMIT_CPU");
  if (spec.max_file_bytes) set_limit(RLIMIT_FSIZE, spec.max_file_bytes, spec.max_file_bytes, "RLIMIT_FSIZE");
  set_limit(RLIMIT_NOFILE, spec.max_open_files, spec.max_open_files, "RLIMIT_NOFILE");
  set_limit(RLIMIT_STACK, spec.max_stack_bytes, spec.max_stack_bytes, "RLIMIT_STACK");
  set_limit(RLIMIT_MEMLOCK, 0, 0, "RLIMIT_MEMLOCK");
  umask(022);
  if (chdir(spec.cwd.c_str()) != 0) Fail(err_fd, "chdir");

  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Fail(err_fd, "PR_SET_PDEATHSIG");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) Fail(err_fd, "PR_SET_NO_NEW_PRIVS");
  int rc = InstallBpf(spec.seccomp);
  if (rc != 0) {
    errno = -rc;
    Fail(err_fd, "install seccomp filter");
  }
  execve(argv[0], argv.data(), envp.data());
  Fail(err_fd, ("execve " + spec.argv[0]).c_str());
}

}  // namespace

StartedProgram StartProgram(const ProgramSpec& spec) {
  StartedProgram out;
  if (spec.argv.empty()) {
    out.exec_error = "empty argv";
    return out;
  }
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    out.exec_error = std::string("pipe: ") + strerror(errno);
    return out;
  }
  pid_t pid = fork();
  if (pid < 0) {
    out.exec_error = std::string("fork: ") + strerror(errno);
    close(err_pipe[0]);
    close(err_pipe[1]);
    return out;
  }
  if (pid == 0) {
    close(err_pipe[0]);
    ChildMain(spec, err_pipe[1]);
  }
  out.pid = pid;
  close(err_pipe[1]);
  char buf[512];
  ssize_t n;
  do {
    n = read(err_pipe[0], buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  if (n > 0) out.exec_error.assign(buf, static_cast<size_t>(n));
  return out;
}

ProgramExit WaitProgram(const StartedProgram& started) {
  ProgramExit out;
  out.exec_error = started.exec_error;
  // PID 1 reaps everything; the first child's status is the program's.
  while (started.pid > 0) {
    int status = 0;
    rusage ru{};
    pid_t w = wait4(-1, &status, 0, &ru);
    if (w < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (w == started.pid) {
      if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
      out.cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000ull +
                   (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
      break;
    }
  }
  // Nothing the program started may outlive it.
  kill(-1, SIGKILL);
  while (true) {
    pid_t w = waitpid(-1, nullptr, 0);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) break;
  }
  return out;
}

ProgramExit RunProgram(const ProgramSpec& spec) { return WaitProgram(StartProgram(spec)); }

namespace {

// Whether /proc/<pid>/stat says the process is a zombie (or is gone).
bool IsZombieOrGone(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return true;
  buf[n] = 0;
  const char* paren = strrchr(buf, ')');  // the name may contain anything
  return paren == nullptr || paren[1] == 0 || paren[2] == 'Z' || paren[2] == 'X';
}

}  // namespace

std::optional<ProgramExit> KillAllBut(pid_t keep) {
  std::optional<ProgramExit> kept;
  auto reap = [&] {
    for (;;) {
      int status = 0;
      rusage ru{};
      pid_t w = wait4(-1, &status, WNOHANG | __WALL, &ru);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;
      if (w == keep) {
        ProgramExit e;
        if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
        kept = e;
      }
    }
  };
  for (int pass = 0; pass < 500; ++pass) {
    int alive = 0;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) break;
    while (dirent* e = readdir(proc)) {
      char* end = nullptr;
      const long pid = strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != 0 || pid <= 1 || pid == keep) continue;
      if (IsZombieOrGone(static_cast<pid_t>(pid))) continue;
      kill(static_cast<pid_t>(pid), SIGKILL);
      ++alive;
    }
    closedir(proc);
    reap();
    if (alive == 0) break;
    usleep(1000);
  }
  reap();
  return kept;
}

}  // namespace airlock::jail
