// Failed console sign-ins, per source (client address), in fixed windows.
// After `max_failures` failures inside a window the source is refused (429,
// Retry-After) until the window ends, its key not looked at, a correct one
// included. Each of the first max_failures failures gets its audit row; the
// refusals after them get one row per window, carrying how many attempts it
// stands for (those suppressed in an earlier window are counted in the next
// row), so a flood adds at most max_failures + 1 rows per source and window.
// A sign-in that succeeds clears its source's failures.
//
//   SignInThrottle throttle({.max_failures = 5, .window = std::chrono::seconds(60)});
//   SignInThrottle::Verdict v = throttle.Check(addr);
//   if (v.retry_after_s > 0) { if (v.audit_attempts) Audit(...); return Reply429(v.retry_after_s); }
//   ... on a refusal:    if (auto n = throttle.Failed(addr)) Audit(..., {{"attempts", *n}});
//   ... on a success:    throttle.Succeeded(addr);
//
// Thread-safe; memory is bounded by the sources seen within a window.
#ifndef AIRLOCK_CONSOLE_SIGNIN_THROTTLE_H_
#define AIRLOCK_CONSOLE_SIGNIN_THROTTLE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace airlock::console {

class SignInThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    uint64_t max_failures = 5;
    std::chrono::seconds window{60};
    std::function<Clock::time_point()> now;  // default: Clock::now (tests inject one)
  };
  struct Verdict {
    int64_t retry_after_s = 0;  // > 0: refused, try again in this many seconds
    // Refused, and the window's audit row for its refusals is due now: the
    // number of attempts it stands for.
    std::optional<uint64_t> audit_attempts;
  };

  explicit SignInThrottle(Options options);

  // Whether `source` may try now; a refusal is counted.
  Verdict Check(const std::string& source);
  // Records a failed attempt. The number of attempts the audit row to write
  // now stands for (1, plus any suppressed earlier), or nullopt when this
  // failure went past the limit (concurrent attempts) and its row was written.
  std::optional<uint64_t> Failed(const std::string& source);
  // A successful sign-in: forgets the source. Returns the refused attempts
  // not yet in an audit row (0 mostly).
  uint64_t Succeeded(const std::string& source);

 private:
  struct Source {
    Clock::time_point window_start;
    uint64_t failures = 0;    // in the window
    bool summarized = false;  // the window's row for refusals was written
    uint64_t unreported = 0;  // refused attempts in no row yet
  };
  Clock::time_point Now() const { return options_.now ? options_.now() : Clock::now(); }
  // The source's state, its window restarted when it has ended (mu_ held).
  Source& Find(const std::string& source, Clock::time_point now);
  // Counts a refused attempt; the row's count when the window's is due.
  static std::optional<uint64_t> Refused(Source& s);
  void Forget(Clock::time_point now);  // mu_ held: sources whose window ended

  const Options options_;
  std::mutex mu_;
  std::map<std::string, Source> sources_;
};

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_SIGNIN_THROTTLE_H_
