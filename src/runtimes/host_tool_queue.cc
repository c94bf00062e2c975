#include "runtimes/host_tool_queue.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace airlock::runtimes {

HostToolQueue::HostToolQueue() : thread_([this] { Loop(); }) {}

HostToolQueue::~HostToolQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (child_ > 0) kill(child_, SIGKILL);
  }
  cv_.notify_all();
  thread_.join();
}

bool HostToolQueue::Enqueue(const std::string& key, std::function<Status()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_ || !queued_.insert(key).second) return false;
  queue_.emplace_back(key, std::move(job));
  cv_.notify_all();
  return true;
}

void HostToolQueue::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_ || (queue_.empty() && !busy_); });
}

HostToolQueue::Stats HostToolQueue::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void HostToolQueue::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::function<Status()> job = std::move(queue_.front().second);
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    const Status st = job();
    lock.lock();
    busy_ = false;
    ++(st.ok() ? stats_.succeeded : stats_.failed);
    cv_.notify_all();
  }
}

Status HostToolQueue::RunTool(std::vector<std::string> argv, std::vector<std::string> env) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') return InvalidArgument("a tool needs an absolute path");
  // Built before fork: the runner is multi-threaded.
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Cancelled("stopping");
    pid = fork();
    if (pid == 0) {
      // Async-signal-safe calls only from here on.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      setpriority(PRIO_PROCESS, 0, 19);
      const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
      dup2(null_fd, 0);
      dup2(null_fd, 1);
      dup2(null_fd, 2);
      execve(args[0], args.data(), envp.data());
      _exit(127);
    }
    if (pid < 0) return ErrnoError("fork");
    child_ = pid;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    child_ = 0;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Internal(argv[0] + (WIFEXITED(status) ? " exited with " + std::to_string(WEXITSTATUS(status))
                                                 : std::string(" was killed")));
  }
  return OkStatus();
}

}  // namespace airlock::runtimes
