#include "metrics/metered_executor.h"

#include <atomic>
#include <chrono>

namespace airlock::metrics {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace

MeteredExecutor::MeteredExecutor(runtimes::CodeExecutor& inner, Registry& registry)
    : inner_(inner),
      runs_(registry.Counter("airlock_runs_total", "Runs by language, tier, mode (run, session, code_mode) and status",
                             {"language", "tier", "mode", "status"})),
      seconds_(registry.Histogram("airlock_run_seconds",
                                  "Run latency by phase: queue, start (jail and interpreter), program, total",
                                  {"phase"})),
      sessions_opened_(registry.Counter("airlock_sessions_opened_total", "Sessions opened, by language and result",
                                        {"language", "result"})) {}

runtimes::RunResult MeteredExecutor::Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                                         CancelToken& cancel, runtimes::BridgeHandler* bridge) {
  const Clock::time_point t0 = Clock::now();
  // Written by the progress callback (the runner's read thread), read here after Run returns.
  std::atomic<int64_t> started_ns{0}, running_ns{0};
  auto stamp = [t0](std::atomic<int64_t>& slot) {
    int64_t expected = 0;
    slot.compare_exchange_strong(expected, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  };
  runtimes::ProgressFn wrapped = [&](runtimes::RunPhase phase) {
    if (phase == runtimes::RunPhase::kStarting) stamp(started_ns);
    if (phase == runtimes::RunPhase::kCompiling || phase == runtimes::RunPhase::kRunning) {
      stamp(started_ns);
      if (phase == runtimes::RunPhase::kRunning) stamp(running_ns);
    }
    if (progress) progress(phase);
  };
  runtimes::RunResult r = inner_.Run(request, wrapped, cancel, bridge);
  const double total = SecondsSince(t0, Clock::now());
  const char* mode = !request.session_id.empty() ? "session" : request.code_mode ? "code_mode" : "run";
  const std::string status =
      r.error_code.empty() ? std::string(runtimes::RunStatusName(r.status)) : r.error_code;
  runs_.Add({request.language, request.isolation, mode, status});
  seconds_.Observe({"total"}, total);
  if (const int64_t s = started_ns.load(); s > 0) {
    seconds_.Observe({"queue"}, s / 1e9);
    if (const int64_t run = running_ns.load(); run > s) seconds_.Observe({"start"}, (run - s) / 1e9);
  }
  // A program that ran is timed even when it took under a millisecond
  // (wall_ms 0: a pre-started print(1) can); one that never ran is not.
  if (r.wall_ms > 0 || running_ns.load() > 0) seconds_.Observe({"program"}, r.wall_ms / 1e3);
  return r;
}

Status MeteredExecutor::OpenSession(const runtimes::SessionSpec& spec) {
  Status st = inner_.OpenSession(spec);
  sessions_opened_.Add({spec.language, st.ok() ? "ok" : "error"});
  return st;
}

}  // namespace airlock::metrics
