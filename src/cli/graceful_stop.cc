#include "cli/graceful_stop.h"

#include <string.h>
#include <time.h>

#include <iostream>
#include <thread>

namespace airlock::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until no call is in flight, `deadline` passes, or one of `signals`
// arrives; true if none is left.
bool WaitForCalls(mcp::RunTracker& runs, Clock::time_point deadline, const sigset_t* signals) {
  while (runs.size() > 0) {
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto step = std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(50));
    const timespec ts{0, static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(step).count())};
    if (signals != nullptr && sigtimedwait(signals, nullptr, &ts) > 0) {
      std::cerr << "airlock: second stop signal: not waiting any longer\n";
      return false;
    }
    if (signals == nullptr) std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace

size_t DrainAndStop(int sig, mcp::HttpTransport& transport, mcp::RunTracker& runs, runner::RunnerBackend& runner,
                    std::chrono::seconds grace, const sigset_t* signals) {
  transport.Drain();
  const size_t in_flight = runs.size();
  std::cerr << "airlock: " << strsignal(sig) << ": stopping; new requests are refused";
  if (in_flight > 0) std::cerr << "; " << in_flight << " call(s) in flight get up to " << grace.count() << " s to finish";
  std::cerr << std::endl;
  size_t cancelled = 0;
  if (!WaitForCalls(runs, Clock::now() + grace, signals)) {
    for (const mcp::RunInFlight& r : runs.List()) {
      if (runs.Cancel(r.run_id).ok()) ++cancelled;
    }
    std::cerr << "airlock: cancelled " << cancelled << " call(s) still running after the grace period" << std::endl;
    WaitForCalls(runs, Clock::now() + std::chrono::seconds(5), nullptr);
  }
  transport.Stop();
  runner.Stop();
  std::cerr << "airlock: stopped cleanly" << std::endl;
  return cancelled;
}

}  // namespace airlock::cli
