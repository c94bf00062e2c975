#include "base/rate_window.h"

namespace airlock {

void RateWindow::Expire(std::deque<Clock::time_point>& events, Clock::time_point now) const {
  while (!events.empty() && now - events.front() >= window_) events.pop_front();
}

bool RateWindow::TryAcquire(const std::string& key) {
  if (max_events_ == 0) return true;
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mu_);
  // Forget keys that have gone quiet, so memory stays bounded.
  for (auto it = events_.begin(); it != events_.end();) {
    Expire(it->second, now);
    it = it->second.empty() ? events_.erase(it) : std::next(it);
  }
  std::deque<Clock::time_point>& mine = events_[key];
  if (mine.size() >= max_events_) return false;
  mine.push_back(now);
  return true;
}

RateWindow::Clock::duration RateWindow::RetryAfter(const std::string& key) {
  if (max_events_ == 0) return Clock::duration::zero();
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(key);
  if (it == events_.end()) return Clock::duration::zero();
  Expire(it->second, now);
  if (it->second.size() < max_events_) return Clock::duration::zero();
  return it->second.front() + window_ - now;
}

}  // namespace airlock
