// The one interface through which anything runs code.
//
// Implementations: runtimes::LocalExecutor (jails in this process; used by
// the runner process and by `airlock run`) and runner::RunnerClient (the MCP
// server's handle on the separate runner process). The MCP server only ever
// holds a RunnerClient, so it cannot run code itself.
#ifndef AIRLOCK_RUNTIMES_CODE_EXECUTOR_H_
#define AIRLOCK_RUNTIMES_CODE_EXECUTOR_H_

#include <vector>

#include "base/cancel.h"
#include "runtimes/bridge.h"
#include "runtimes/run_types.h"

namespace airlock::runtimes {

class CodeExecutor {
 public:
  virtual ~CodeExecutor() = default;

  // Runs `request` to completion (or until `cancel` fires) and returns the
  // result. Never throws; failures are results with status internal_error
  // and a message. Thread-safe: many runs may be in flight at once.
  //
  // A code-mode request (request.code_mode) needs `bridge`: every frame the
  // program sends goes to it, its replies go back to the program; it must
  // outlive the call. Without one, a code-mode request is refused
  // (invalid_request). Ordinary runs ignore `bridge`.
  virtual RunResult Run(const RunRequest& request, const ProgressFn& progress, CancelToken& cancel,
                        BridgeHandler* bridge = nullptr) = 0;

  // Languages this executor can run, with versions and default limits.
  virtual std::vector<LanguageInfo> Languages() = 0;
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_CODE_EXECUTOR_H_
