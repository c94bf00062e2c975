// A fixed-capacity pool of threads for long-running requests (tools/call),
// so that a transport keeps reading messages while runs execute.
//
// Threads are started on demand up to `max_threads` and kept. There is no
// queue beyond the threads: TrySubmit fails when every thread is busy, and
// the caller answers "busy" at once (the executor has its own bounded queue;
// this pool is sized to cover it).
#ifndef AIRLOCK_MCP_WORKER_POOL_H_
#define AIRLOCK_MCP_WORKER_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace airlock::mcp {

class WorkerPool {
 public:
  explicit WorkerPool(size_t max_threads);
  ~WorkerPool();  // waits for running tasks
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on a pool thread; false if all threads are busy or stopping.
  bool TrySubmit(std::function<void()> task);

  size_t busy() const;

 private:
  void Loop();

  const size_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  size_t busy_ = 0;  // tasks submitted and not finished
  bool stopping_ = false;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_WORKER_POOL_H_
