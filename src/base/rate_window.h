// A per-key sliding-window rate limit: at most `max_events` per `window` for
// each key (e.g. code-tool proposals per user per hour).
//
//   RateWindow proposals(20, std::chrono::hours(1));
//   if (!proposals.TryAcquire(user)) return refuse("E_RATE_LIMITED", ...);
//
// Thread-safe. Memory is bounded by the events inside the window: a key
// whose events have all expired is forgotten. The clock is injectable for
// tests.
#ifndef AIRLOCK_BASE_RATE_WINDOW_H_
#define AIRLOCK_BASE_RATE_WINDOW_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace airlock {

class RateWindow {
 public:
  using Clock = std::chrono::steady_clock;

  // max_events == 0: no limit.
  RateWindow(uint32_t max_events, Clock::duration window, std::function<Clock::time_point()> now = Clock::now)
      : max_events_(max_events), window_(window), now_(std::move(now)) {}

  // Records an event for `key` and returns true, or returns false (recording
  // nothing) when `key` already has max_events inside the window.
  bool TryAcquire(const std::string& key);

  // How long until `key` may act again (zero when it may now).
  Clock::duration RetryAfter(const std::string& key);

  uint32_t max_events() const { return max_events_; }
  Clock::duration window() const { return window_; }

 private:
  void Expire(std::deque<Clock::time_point>& events, Clock::time_point now) const;

  const uint32_t max_events_;
  const Clock::duration window_;
  const std::function<Clock::time_point()> now_;
  std::mutex mu_;
  std::map<std::string, std::deque<Clock::time_point>> events_;
};

}  // namespace airlock

#endif  // AIRLOCK_BASE_RATE_WINDOW_H_
