#include "jail/jail_util.h"

#include <poll.h>
#include <sys/timerfd.h>

#include "base/encoding.h"

namespace airlock::jail::internal {

using nlohmann::json;

// Waits until `fd` is readable or `pidfd` signals the process died.
Status WaitReadable(int fd, int pidfd, int timeout_ms) {
  pollfd p[2] = {{fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
  int r;
  do {
    r = poll(p, pidfd >= 0 ? 2 : 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return ErrnoError("poll");
  if (r == 0) return DeadlineExceeded("jail setup timed out");
  if (p[0].revents & (POLLIN | POLLHUP)) return OkStatus();
  return Internal("jail init exited during setup");
}

// The RLIMIT_CPU seconds for `lim`: cpu_ms rounded up, else the wall clock
// rounded up plus one second (a backstop behind the supervisor's timer).
uint64_t CpuSeconds(const Limits& lim) {
  return lim.cpu_ms ? (lim.cpu_ms + 999) / 1000 : (lim.wall_ms + 999) / 1000 + 1;
}

// The part of an exec or start message that describes the program.
json ProgramMessage(const char* type, const ExecRequest& request) {
  const Limits& lim = request.limits;
  std::string bpf(reinterpret_cast<const char*>(request.seccomp->instructions.data()),
                  request.seccomp->instructions.size() * sizeof(sock_filter));
  return {{"type", type},
          {"argv", request.argv},
          {"env", request.env},
          {"cwd", request.cwd},
          {"cpu_seconds", CpuSeconds(lim)},
          {"max_file_bytes", lim.max_file_bytes},
          {"max_open_files", lim.max_open_files},
          {"max_stack_bytes", lim.max_stack_bytes},
          {"seccomp_b64", Base64Encode(bpf)}};
}

json FilesMessage(const std::vector<FileEntry>& files) {
  json out = json::array();
  for (const auto& f : files) {
    out.push_back({{"name", f.name}, {"content_b64", Base64Encode(f.content)}, {"executable", f.executable}});
  }
  return out;
}

void ReadCollectedFiles(const json& msg, ExecResult* result) {
  if (auto files = msg.find("files"); files != msg.end() && files->is_array()) {
    for (const json& f : *files) {
      if (!f.is_object()) continue;
      CollectedFile cf;
      cf.name = f.value("name", "");
      Base64Decode(f.value("content_b64", ""), &cf.content);
      cf.size = f.value("size", 0ull);
      cf.truncated = f.value("truncated", false);
      result->files.push_back(std::move(cf));
    }
  }
  auto notes = [&msg](const char* key, std::vector<FileNote>* out) {
    auto it = msg.find(key);
    if (it == msg.end() || !it->is_array()) return;
    for (const json& n : *it) {
      if (!n.is_object()) continue;
      out->push_back({n.value("name", ""), n.value("size", 0ull), n.value("reason", "")});
    }
  };
  notes("files_skipped", &result->files_skipped);
  notes("files_left", &result->files_left);
}

uint64_t MsSince(Clock::time_point t) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

UniqueFd WallClockTimer(uint64_t wall_ms) {
  UniqueFd timer(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  itimerspec its{};
  its.it_value.tv_sec = static_cast<time_t>(wall_ms / 1000);
  its.it_value.tv_nsec = static_cast<long>((wall_ms % 1000) * 1000000);
  if (wall_ms == 0) its.it_value.tv_nsec = 1;
  timerfd_settime(timer.get(), 0, &its, nullptr);
  return timer;
}

void FillCgroupUsage(const Cgroup* cgroup, const CgroupStats& before, ExecResult* result) {
  if (cgroup == nullptr) return;
  const CgroupStats after = cgroup->Stats();
  result->peak_memory_bytes = after.peak_memory_bytes;
  result->oom_killed = after.oom_kills > before.oom_kills;
  result->pids_limit_hit = after.pids_limit_hit;
  if (after.cpu_usage_ns > before.cpu_usage_ns) result->cpu_ms = (after.cpu_usage_ns - before.cpu_usage_ns) / 1000000;
}

}  // namespace airlock::jail::internal
