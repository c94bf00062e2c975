// A long-lived thread on which jails that outlive one request are made.
//
// A jail's init dies with the *thread* that cloned it (PR_SET_PDEATHSIG is
// tied to the creating thread, not the process), so a jail that must stay
// alive after the request that asked for it (a session's) cannot be made on
// that request's thread: it is made here instead.
//
//   JailMakerThread maker;
//   StatusOr<std::unique_ptr<SandboxSession>> s = maker.Run([&] { return SandboxSession::Open(...); });
#ifndef AIRLOCK_RUNTIMES_JAIL_MAKER_THREAD_H_
#define AIRLOCK_RUNTIMES_JAIL_MAKER_THREAD_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

namespace airlock::runtimes {

class JailMakerThread {
 public:
  JailMakerThread() : thread_([this] { Loop(); }) {}
  ~JailMakerThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  JailMakerThread(const JailMakerThread&) = delete;
  JailMakerThread& operator=(const JailMakerThread&) = delete;

  // Runs `f` on the maker thread and returns what it returns. Jobs run one
  // at a time, in order.
  template <typename F>
  auto Run(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.emplace_back([&task] { task(); });
    }
    cv_.notify_one();
    return result.get();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::deque<std::function<void()>> jobs_;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_JAIL_MAKER_THREAD_H_
