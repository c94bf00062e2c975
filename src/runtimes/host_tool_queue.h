// HostToolQueue: the background thread of a runner-side cache that builds its
// entries with a host tool (PchCache runs the C++ compiler, WasmCodeStore
// runs airlock-js), one job at a time.
//
//   HostToolQueue queue;
//   queue.Enqueue("iostream", [&] {
//     AIRLOCK_RETURN_IF_ERROR(queue.RunTool({"/usr/bin/g++", ...}, {"PATH=/usr/bin:/bin"}));
//     return Rename(...);  // whatever makes the result visible
//   });
//   queue.WaitIdle();
//
// A key is queued once for the queue's life, whatever the job's outcome: a
// job that failed is not retried. RunTool runs the tool on the host, outside
// any jail, at the lowest CPU priority, with only the environment given and
// its standard streams on /dev/null; it never outlives the queue: the
// destructor kills the tool running and joins the thread, and the kernel
// kills it if the runner dies (PR_SET_PDEATHSIG).
//
// Thread-safe.
#ifndef AIRLOCK_RUNTIMES_HOST_TOOL_QUEUE_H_
#define AIRLOCK_RUNTIMES_HOST_TOOL_QUEUE_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"

namespace airlock::runtimes {

class HostToolQueue {
 public:
  HostToolQueue();
  ~HostToolQueue();
  HostToolQueue(const HostToolQueue&) = delete;
  HostToolQueue& operator=(const HostToolQueue&) = delete;

  // Queues `job` (run on the queue's thread) unless `key` was ever queued.
  // True if queued now.
  bool Enqueue(const std::string& key, std::function<Status()> job);

  // For a job: runs `argv` (argv[0] an absolute path) with exactly `env`
  // and waits for it. OK if it exits 0; Cancelled once the queue stops.
  Status RunTool(std::vector<std::string> argv, std::vector<std::string> env);

  // Waits until nothing is queued or running (tests, benchmarks).
  void WaitIdle();

  struct Stats {
    uint64_t succeeded = 0;
    uint64_t failed = 0;
  };
  Stats stats() const;

 private:
  void Loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, std::function<Status()>>> queue_;
  std::set<std::string> queued_;  // every key ever queued
  bool busy_ = false;
  bool stop_ = false;
  pid_t child_ = 0;  // the tool running now, killed by the destructor
  Stats stats_;
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_HOST_TOOL_QUEUE_H_
