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

#include <nlohmann/json.hpp>

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

  // Sessions (docs/sessions.md): OpenSession makes a jail with the
  // language's session interpreter running in it, kept under spec.id until
  // CloseSession; Run() with request.session_id == spec.id then runs a cell
  // in it. Errors: NotFound (unknown language, or one without sessions),
  // InvalidArgument, AlreadyExists-like InvalidArgument for a reused id,
  // ResourceExhausted (too many sessions), Unavailable (no runner),
  // FailedPrecondition (the jail could not be made). A session cell's
  // failures are results whose error_code is "E_SESSION_NOT_FOUND" (no
  // such session here), "E_SESSION_LOST" (the cell or an earlier one ended
  // the interpreter; the message says why) or "E_SESSION_BUSY" (a cell of
  // the session is already running). Executors without sessions refuse.
  virtual Status OpenSession(const SessionSpec& spec) {
    return FailedPrecondition("this executor has no sessions");
  }
  // Destroys the session's jail (nothing is left). NotFound if unknown.
  virtual Status CloseSession(const std::string& id) { return NotFound("no such session"); }

  // Where session `id` lives, for a session book other gateways share
  // (sessions/session_book.h): the runner host's address, or "" for a
  // session this executor holds itself (or does not know).
  virtual std::string SessionHost(const std::string& id) { return ""; }
  // Teaches this executor a session another gateway opened on runner host
  // `host` (SessionHost of that gateway), before a cell or the close goes
  // to it. OK when it can route there (or already knew the session);
  // Unavailable, with a message naming the host, when that host is not
  // among this executor's runner hosts (gone, or never known): the session
  // is then lost. Executors without runner hosts accept only host "".
  virtual Status AdoptSession(const std::string& id, const std::string& host) {
    if (host.empty()) return OkStatus();
    return Unavailable("the runner host " + host + " is not one this gateway runs code on");
  }

  // What an operator wants to see of this executor (the console's live
  // page): e.g. {"pool": {hits, misses, ...} | null, "sessions": n}. Cheap;
  // never blocks on a run.
  virtual nlohmann::json Health() { return nlohmann::json::object(); }
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_CODE_EXECUTOR_H_
