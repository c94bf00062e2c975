#include "runner/worker_pool.h"

#include <utility>

namespace airlock::runner {

WorkerPool::WorkerPool(WorkerPoolOptions options) : options_(options) {}

WorkerPool::~WorkerPool() {
  std::list<std::thread> all;
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [this] { return busy_ == 0; });
    stop_ = true;
    all.splice(all.end(), workers_);
    all.splice(all.end(), exited_);
  }
  work_cv_.notify_all();
  for (std::thread& t : all) t.join();
}

void WorkerPool::ReapExitedLocked(std::list<std::thread>* out) { out->splice(out->end(), exited_); }

bool WorkerPool::Submit(std::function<void()> task) {
  std::list<std::thread> reap;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ReapExitedLocked(&reap);
    if (stop_ || busy_ >= options_.max_workers) return false;
    queue_.push_back(std::move(task));
    ++busy_;
    if (idle_ >= queue_.size()) {
      wake = true;
    } else {
      // No idle worker is left for this task: start one. Its iterator is
      // its own handle, so an exiting worker can move itself to exited_.
      workers_.emplace_back();
      auto self = std::prev(workers_.end());
      *self = std::thread([this, self] { WorkerLoop(self); });
      ++started_;
    }
  }
  if (wake) work_cv_.notify_one();
  for (std::thread& t : reap) t.join();
  return true;
}

void WorkerPool::WorkerLoop(std::list<std::thread>::iterator self) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stop_) return;  // the destructor joins us from its own list
      ++idle_;
      const bool woken = work_cv_.wait_for(lock, options_.idle_timeout, [this] { return stop_ || !queue_.empty(); });
      --idle_;
      if (!woken && idle_ >= options_.keep_idle) {
        // Surplus after a burst: leave; the next Submit or the destructor joins us.
        exited_.splice(exited_.end(), workers_, self);
        return;
      }
      continue;
    }
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // its captures die outside the lock, before busy_ drops
    lock.lock();
    if (--busy_ == 0) idle_cv_.notify_all();
  }
}

void WorkerPool::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return busy_ == 0; });
}

WorkerPool::Stats WorkerPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {workers_.size(), idle_, busy_, started_};
}

}  // namespace airlock::runner
