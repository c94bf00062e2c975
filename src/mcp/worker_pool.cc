#include "mcp/worker_pool.h"

namespace airlock::mcp {

WorkerPool::WorkerPool(size_t max_threads) : max_threads_(max_threads == 0 ? 1 : max_threads) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::TrySubmit(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || busy_ >= max_threads_) return false;
  ++busy_;
  tasks_.push_back(std::move(task));
  if (idle_ < tasks_.size()) {
    threads_.emplace_back([this] { Loop(); });
  } else {
    cv_.notify_one();
  }
  return true;
}

size_t WorkerPool::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

void WorkerPool::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    --idle_;
    if (tasks_.empty()) return;  // stopping and drained
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // drop captures outside the lock
    lock.lock();
    --busy_;
  }
}

}  // namespace airlock::mcp
