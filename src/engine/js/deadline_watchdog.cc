#include "engine/js/deadline_watchdog.h"

#include <utility>

namespace airlock::engine::js {

void DeadlineWatchdog::Start(Clock::time_point deadline, std::function<void()> on_deadline) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this, deadline, fire = std::move(on_deadline)] {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_until(lock, deadline, [this] { return stopping_; })) return;
    fire();  // under the lock, so Stop() cannot return while it runs
  });
}

void DeadlineWatchdog::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace airlock::engine::js
