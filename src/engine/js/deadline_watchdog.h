// A thread that fires a callback once, when a wall-clock deadline passes.
//
// The JavaScript host uses it to interrupt a running script: the callback
// sets a flag and asks the engine to run its interrupt callback, which then
// stops the script. The watchdog itself knows nothing about the engine.
//
//   DeadlineWatchdog dog;
//   dog.Start(std::chrono::milliseconds(300), [&] { RequestStop(); });
//   ...                       // run the program
//   dog.Stop();               // or let the destructor do it
//
// The callback runs on the watchdog thread, at most once, and never after
// Stop() has returned.
#ifndef AIRLOCK_ENGINE_JS_DEADLINE_WATCHDOG_H_
#define AIRLOCK_ENGINE_JS_DEADLINE_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace airlock::engine::js {

class DeadlineWatchdog {
 public:
  using Clock = std::chrono::steady_clock;

  DeadlineWatchdog() = default;
  ~DeadlineWatchdog() { Stop(); }
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  // Starts the thread; `on_deadline` runs when `deadline` passes unless Stop()
  // comes first. Calling Start twice without Stop is a programming error.
  void Start(Clock::time_point deadline, std::function<void()> on_deadline);

  // Cancels a pending deadline and joins the thread (idempotent).
  void Stop();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_DEADLINE_WATCHDOG_H_
