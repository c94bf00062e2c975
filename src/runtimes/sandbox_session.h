// One session (docs/sessions.md): a jail built like a one-shot run's, with
// the language's session interpreter (session_harness.h) running in it
// between calls. Each Call() is one cell: one jail::Jail::Turn.
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto s, SandboxSession::Open(host, spec, config, start));
//   RunResult r = s->Call(request, limits, cancel);   // r.error_code E_SESSION_* on failure
//   jail::Jail* dead = s->TakeJail().get();            // to tear down off the request path
//
// A cell that times out, breaks the output limit in kill mode, is
// cancelled, runs the jail out of memory or ends the interpreter loses the
// session: that call's result and every later one carry E_SESSION_LOST and
// the reason; the jail is killed at once. The losing call's status is what
// happened to it (timeout, memory_limit, ...; ok when the cell ended the
// interpreter with exit status 0); later calls are internal_error. An uncaught exception does not
// (the interpreter reports it and goes on). Thread-safe: a Call() while
// another is running gets E_SESSION_BUSY.
//
// Between calls the session's jail is frozen (cgroup freezer: the
// interpreter, anything a cell left running, init): nothing in it computes
// while idle, and the next call's Turn thaws it. A host without a freezer
// runs sessions unfrozen.
#ifndef AIRLOCK_RUNTIMES_SANDBOX_SESSION_H_
#define AIRLOCK_RUNTIMES_SANDBOX_SESSION_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/cancel.h"
#include "jail/host.h"
#include "jail/jail.h"
#include "runtimes/bridge.h"
#include "runtimes/language.h"
#include "runtimes/run_types.h"

namespace airlock::runtimes {

// What bounds one cell, beyond the request's own timeout.
struct CellLimits {
  uint64_t timeout_ms = 10'000;      // the request's or the language default
  uint64_t max_output_bytes = 1u << 20;  // per stream
  bool kill_on_output_limit = true;
  uint32_t max_output_files = jail::OutputFileLimits{}.max_files;
  uint64_t max_output_file_bytes = jail::OutputFileLimits{}.max_file_bytes;
  uint64_t max_output_files_total_bytes = jail::OutputFileLimits{}.max_total_bytes;  // all of a call's output files
};

class SandboxSession {
 public:
  // Creates the jail (`config`) and starts `start.argv` (when empty:
  // `spec.session_argv`) in it with `start`'s env, seccomp policy and
  // rlimits. `spec` must outlive the session; so must `host`.
  static StatusOr<std::unique_ptr<SandboxSession>> Open(jail::JailHost& host, const LanguageSpec& spec,
                                                        const jail::JailConfig& config,
                                                        const jail::ExecRequest& start);

  // `bridge` (a code-mode session's cell): a fresh bridge for this cell
  // only, handed to the interpreter with the turn and closed (every frame
  // delivered) before Call returns; the cell's frames go to `bridge`.
  RunResult Call(const RunRequest& request, const CellLimits& limits, CancelToken& cancel,
                 BridgeHandler* bridge = nullptr);

  // Hands the jail over (null once taken); the session is then lost. A cell
  // still running is cancelled first, so this never waits for its clock.
  std::unique_ptr<jail::Jail> TakeJail();

  const LanguageSpec& spec() const { return spec_; }
  uint64_t memory_mb() const { return memory_mb_; }

 private:
  SandboxSession(const LanguageSpec& spec, uint64_t memory_mb) : spec_(spec), memory_mb_(memory_mb) {}
  // Marks the session lost and kills its jail; `result` becomes the call's answer.
  void Lose(RunResult& result, const std::string& reason);

  const LanguageSpec& spec_;
  const uint64_t memory_mb_;
  std::mutex mu_;  // one cell at a time; guards the fields below
  std::unique_ptr<jail::Jail> jail_;
  std::string lost_reason_;  // non-empty once lost
  std::mutex running_mu_;           // guards running_ (never held with mu_ waiting)
  CancelToken* running_ = nullptr;  // the cell in flight, if any
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_SANDBOX_SESSION_H_
