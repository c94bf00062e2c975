// A FIFO of jobs run on at most N threads, for the bridge's downstream calls:
// more jobs than threads wait in arrival order; Stop() drops whatever has not
// started, so nothing queued can run after the run has ended (codemode.md
// §6.3 G-D7).
//
//   CallQueue queue(limits.max_concurrent);
//   queue.Submit([&] { Dispatch(call); }, [&] { RecordDropped(call); });
//   ...
//   queue.Stop();      // queued jobs are dropped; no job starts after this
//   cancel.Cancel();   // make the running ones return early
//   queue.Join();      // wait for them
//
// Threads are created lazily (one per job while fewer than N exist and none
// is idle) and joined by Join() or the destructor. Thread-safe, except that
// Join() must not be called from a job.
#ifndef AIRLOCK_CODEMODE_CALL_QUEUE_H_
#define AIRLOCK_CODEMODE_CALL_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace airlock::codemode {

class CallQueue {
 public:
  explicit CallQueue(uint32_t max_threads);
  ~CallQueue();  // Stop(); Join()
  CallQueue(const CallQueue&) = delete;
  CallQueue& operator=(const CallQueue&) = delete;

  // Queues `run`. If the queue is stopped (now, or before `run` starts),
  // `dropped` is called instead, on the thread that submits or stops.
  void Submit(std::function<void()> run, std::function<void()> dropped);

  // Drops every queued job (calling its `dropped`) and refuses new ones.
  // Running jobs continue. Idempotent.
  void Stop();

  // Waits for running jobs and joins every thread. Call after Stop().
  void Join();

  // Jobs running right now.
  size_t running() const;

 private:
  struct Job {
    std::function<void()> run;
    std::function<void()> dropped;
  };
  void Worker();

  const uint32_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  size_t running_ = 0;
  bool stopped_ = false;
};

}  // namespace airlock::codemode

#endif  // AIRLOCK_CODEMODE_CALL_QUEUE_H_
