#include "runtimes/jail_reaper.h"

namespace airlock::runtimes {

JailReaper::JailReaper() : thread_([this] { Loop(); }) {}

JailReaper::~JailReaper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();  // it empties retired_ before it returns
}

void JailReaper::Retire(std::unique_ptr<jail::Jail> used) {
  if (!used) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    retired_.push_back(std::move(used));
  }
  cv_.notify_all();
}

void JailReaper::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return retired_.empty() && in_flight_ == 0; });
}

void JailReaper::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !retired_.empty(); });
    if (retired_.empty()) return;  // stop_, and nothing left to destroy
    std::vector<std::unique_ptr<jail::Jail>> batch;
    batch.swap(retired_);
    in_flight_ = batch.size();
    lock.unlock();
    batch.clear();  // kill and reap outside the lock
    lock.lock();
    in_flight_ = 0;
    cv_.notify_all();  // Drain()
  }
}

}  // namespace airlock::runtimes
