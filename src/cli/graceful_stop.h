// How `airlock serve --http` stops on SIGTERM or SIGINT (issue 19): no new
// requests (503, /readyz not ready), the calls in flight get `grace` to
// finish, the rest are cancelled, then the transport and the runner stop —
// and the log says what happened, ending with "stopped cleanly".
//
//   int sig = 0;
//   sigwait(&stop_signals, &sig);
//   DrainAndStop(sig, transport, runs, runner, grace, &stop_signals);
#ifndef AIRLOCK_CLI_GRACEFUL_STOP_H_
#define AIRLOCK_CLI_GRACEFUL_STOP_H_

#include <signal.h>

#include <chrono>

#include "mcp/http_transport.h"
#include "mcp/run_tracker.h"
#include "runner/runner_backend.h"

namespace airlock::cli {

// `signals` (blocked in every thread): a second one during the grace period
// cuts it short. Returns the number of calls that had to be cancelled.
size_t DrainAndStop(int sig, mcp::HttpTransport& transport, mcp::RunTracker& runs, runner::RunnerBackend& runner,
                    std::chrono::seconds grace, const sigset_t* signals);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_GRACEFUL_STOP_H_
