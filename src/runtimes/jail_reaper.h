// JailReaper: destroys used jails on a thread of its own, so that a run's
// result does not wait for its jail's teardown (SIGKILL of the jail's init,
// reaping its PID namespace, removing its cgroup: 0.5-15 ms).
//
//   JailReaper reaper;
//   ... ExecResult r = jail->Exec(...);
//   reaper.Retire(std::move(jail));   // returns at once
//
// The destructor finishes every retired jail before it returns, so an owner
// that outlives its runs still leaves nothing behind.
#ifndef AIRLOCK_RUNTIMES_JAIL_REAPER_H_
#define AIRLOCK_RUNTIMES_JAIL_REAPER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "jail/jail.h"

namespace airlock::runtimes {

class JailReaper {
 public:
  JailReaper();
  ~JailReaper();
  JailReaper(const JailReaper&) = delete;
  JailReaper& operator=(const JailReaper&) = delete;

  // Hands over a used jail (nullptr is ignored).
  void Retire(std::unique_ptr<jail::Jail> used);

  // Blocks until every jail retired so far is destroyed.
  void Drain();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<jail::Jail>> retired_;
  size_t in_flight_ = 0;  // taken by the thread, being destroyed
  bool stop_ = false;
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_JAIL_REAPER_H_
