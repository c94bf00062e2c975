// WorkerPool: the runner's persistent threads. A task handed to Submit runs
// on an idle worker; a new worker is started only when none is idle (up to
// max_workers), and a worker outlives its task, so a steady stream of runs
// reuses the same few threads instead of creating and joining one per run.
//
//   WorkerPool pool({.max_workers = 72});
//   if (!pool.Submit([] { ... })) { /* stopping, or max_workers busy */ }
//   pool.WaitIdle();   // every submitted task has returned
//
// Workers idle longer than idle_timeout exit, down to keep_idle of them, so
// a burst's threads do not stay forever. The destructor waits for the tasks
// in flight and joins every worker. Tasks must not throw (a throw ends the
// process, as from any std::thread).
#ifndef AIRLOCK_RUNNER_WORKER_POOL_H_
#define AIRLOCK_RUNNER_WORKER_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace airlock::runner {

struct WorkerPoolOptions {
  size_t max_workers = 64;
  // Idle workers kept past idle_timeout.
  size_t keep_idle = 4;
  std::chrono::milliseconds idle_timeout{30'000};
};

class WorkerPool {
 public:
  struct Stats {
    size_t workers = 0;  // threads alive
    size_t idle = 0;     // of them, waiting for a task
    size_t busy = 0;     // tasks running or queued
    size_t started = 0;  // threads ever started
  };

  explicit WorkerPool(WorkerPoolOptions options = {});
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on a worker. False (and `task` dropped) when max_workers
  // tasks are already running, or the pool is stopping.
  bool Submit(std::function<void()> task);

  // Blocks until no task is queued or running.
  void WaitIdle();

  Stats stats() const;

 private:
  void WorkerLoop(std::list<std::thread>::iterator self);
  void ReapExitedLocked(std::list<std::thread>* out);

  const WorkerPoolOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // workers wait for tasks
  std::condition_variable idle_cv_;  // WaitIdle waits for busy_ == 0
  std::deque<std::function<void()>> queue_;
  std::list<std::thread> workers_;
  // Workers that returned from WorkerLoop, to be joined by the next caller.
  std::list<std::thread> exited_;
  size_t idle_ = 0;
  size_t busy_ = 0;
  size_t started_ = 0;
  bool stop_ = false;
};

}  // namespace airlock::runner

#endif  // AIRLOCK_RUNNER_WORKER_POOL_H_
