#include "codemode/call_queue.h"

#include <algorithm>
#include <system_error>
#include <utility>

namespace airlock::codemode {

CallQueue::CallQueue(uint32_t max_threads) : max_threads_(std::max<uint32_t>(max_threads, 1)) {}

CallQueue::~CallQueue() {
  Stop();
  Join();
}

void CallQueue::Submit(std::function<void()> run, std::function<void()> dropped) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopped_) {
      queue_.push_back(Job{std::move(run), std::move(dropped)});
      // A new thread only if every existing one is busy with an earlier job.
      if (idle_ < queue_.size() && threads_.size() < max_threads_) {
        try {
          threads_.emplace_back([this] { Worker(); });
        } catch (const std::system_error&) {
          // Out of threads: the existing ones (if any) will get to the job.
        }
      }
      if (!threads_.empty()) {
        cv_.notify_one();
        return;
      }
      dropped = std::move(queue_.back().dropped);
      queue_.pop_back();
    }
  }
  if (dropped) dropped();
}

void CallQueue::Stop() {
  std::deque<Job> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    dropped.swap(queue_);
  }
  cv_.notify_all();
  for (Job& job : dropped) {
    if (job.dropped) job.dropped();
  }
}

void CallQueue::Join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

size_t CallQueue::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

void CallQueue::Worker() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ++idle_;
    cv_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
    --idle_;
    if (stopped_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    job.run();
    job = Job{};  // release captures outside the lock
    lock.lock();
    --running_;
  }
}

}  // namespace airlock::codemode
