// Startup latency of one tiny program: airlock against its baselines,
// all measured in this one process, interleaved round by round so that
// machine noise hits every contender alike.
//
//   build/airlock_bench [--rounds N] [--lang python]
//
// Prints the median and p90 wall time of each contender and its ratio to the
// bare interpreter. Not a test: it asserts nothing.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "jail/host.h"
#include "runtimes/local_executor.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// Runs argv with stdout/stderr to /dev/null; returns wall ms, or -1.
double TimeCommand(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  const auto t0 = Clock::now();
  pid_t pid;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  posix_spawn_file_actions_destroy(&fa);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

struct Series {
  std::string name;
  std::function<double()> run;
  std::vector<double> samples;
  double Quantile(double q) {
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    if (s.empty()) return -1;
    return s[std::min(s.size() - 1, static_cast<size_t>(q * (s.size() - 1) + 0.5))];
  }
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 30;
  std::string lang = "python";
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--lang")) lang = argv[++i];
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  self[n > 0 ? n : 0] = 0;
  std::string dir(self);
  dir = dir.substr(0, dir.rfind('/'));
  const std::string airlock = dir + "/airlock";
  const std::string src = "/tmp/airlock_bench_hello.py";
  {
    FILE* f = fopen(src.c_str(), "w");
    fputs("print(1)\n", f);
    fclose(f);
  }

  auto host = airlock::jail::JailHost::Create();
  if (!host.ok()) {
    fprintf(stderr, "%s\n", host.status().ToString().c_str());
    return 1;
  }
  auto executor = airlock::runtimes::LocalExecutor::Create(**host);
  if (!executor.ok()) return 1;

  std::vector<Series> series = {
      {"bare python3 -c 'print(1)'", [] { return TimeCommand({"/usr/bin/python3", "-c", "print(1)"}); }, {}},
      {"bare python3 -I -S -c pass", [] { return TimeCommand({"/usr/bin/python3", "-I", "-S", "-c", "pass"}); }, {}},
      {"bwrap (all namespaces) python3", [] {
         return TimeCommand({"/usr/bin/bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                             "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--proc", "/proc",
                             "--dev", "/dev", "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent",
                             "--new-session", "--clearenv", "/usr/bin/python3", "-c", "print(1)"});
       }, {}},
      {"airlock run --lang python (CLI process)", [&] { return TimeCommand({airlock, "run", "--lang", "python", src}); }, {}},
      {"airlock LocalExecutor::Run (in process)", [&] {
         airlock::runtimes::RunRequest req;
         req.language = lang;
         req.code = "print(1)\n";
         airlock::CancelToken cancel;
         const auto t0 = Clock::now();
         auto r = (*executor)->Run(req, nullptr, cancel);
         const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
         return r.ok() ? ms : -1;
       }, {}},
  };
  for (auto& s : series) s.run();  // warm the page cache
  for (int r = 0; r < rounds; ++r)
    for (auto& s : series) {
      double ms = s.run();
      if (ms >= 0) s.samples.push_back(ms);
    }
  const double base = series[0].Quantile(0.5);
  printf("python print(1) startup, %d rounds interleaved, %ld cores\n", rounds, sysconf(_SC_NPROCESSORS_ONLN));
  printf("%-44s %10s %10s %8s %8s\n", "contender", "median ms", "p90 ms", "vs bare", "ok runs");
  for (auto& s : series) {
    printf("%-44s %10.1f %10.1f %7.2fx %8zu\n", s.name.c_str(), s.Quantile(0.5), s.Quantile(0.9),
           s.Quantile(0.5) / base, s.samples.size());
  }
  unlink(src.c_str());
  return 0;
}
