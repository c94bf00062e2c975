// What `airlock serve` runs code through: a CodeExecutor that runs nothing in
// this process, with a lifecycle. Two implementations:
//  - runner::RunnerClient: one runner (the local runner process, or one
//    remote runner host through remote/remote_link.h);
//  - remote::RunnerFleet: several runner hosts, with placement and health
//    checks (remote/runner_fleet.h).
// Neither ever falls back to running code in the calling process.
#ifndef AIRLOCK_RUNNER_RUNNER_BACKEND_H_
#define AIRLOCK_RUNNER_RUNNER_BACKEND_H_

#include "base/status.h"
#include "runtimes/code_executor.h"

namespace airlock::runner {

class RunnerBackend : public runtimes::CodeExecutor {
 public:
  // Starts connecting; waits (bounded) until runs can be taken. Unavailable
  // if none can yet; it keeps trying in the background either way.
  virtual Status Start() = 0;
  // Fails pending runs, cancels those in flight, and ends every connection.
  // Idempotent and final.
  virtual void Stop() = 0;
};

}  // namespace airlock::runner

#endif  // AIRLOCK_RUNNER_RUNNER_BACKEND_H_
