// The one interface through which anything runs code.
//
// Implementations: runtimes::LocalExecutor (jails in this process; used by
// the runner process and by `airlock run`) and runner::RunnerClient (the MCP
// server's handle on the separate runner process). The MCP server only ever
// holds a RunnerClient, so it cannot run code itself.
#ifndef AIRLOCK_RUNTIMES_CODE_EXECUTOR_H_
#define AIRLOCK_RUNTIMES_CODE_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <string>
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
  // A paused session (PauseSession) has no jail: closing it deletes its
  // image.
  virtual Status CloseSession(const std::string& id) { return NotFound("no such session"); }

  // Checkpoints (docs/sessions.md, "Pause, resume and fork"; only sessions
  // of languages that can be checkpointed: the WASM tier's Python).
  // PauseSession writes the session's whole state to a private image and
  // destroys its jail; its next cell (or ResumeSession) restores it in a
  // new jail, transparently. OK when already paused. Errors: NotFound (no
  // such session here); FailedPrecondition whose message starts with
  // "E_SESSION_NOT_PAUSABLE" (the language cannot be paused; the session
  // goes on, live), "E_SESSION_LOST" (lost, before or by this pause) or
  // "E_SESSION_BUSY" (a cell is running); another FailedPrecondition (the
  // image could not be made; the session goes on, live). Executors without
  // checkpoints refuse.
  virtual Status PauseSession(const std::string& id) {
    return FailedPrecondition("this executor cannot pause sessions");
  }
  // Restores a paused session now (OK, nothing done, when it is live).
  // Errors as PauseSession's; a restore that fails loses the session
  // (E_SESSION_LOST).
  virtual Status ResumeSession(const std::string& id) {
    return FailedPrecondition("this executor cannot resume sessions");
  }
  // A new live session under copy.id holding a copy of session `id`'s
  // state (its variables, imports and files); `id` goes on as it was, live
  // or paused. The copy's other fields are the source's (the caller fills
  // them; an executor may keep the source's own). It counts against the
  // executor's session limits as OpenSession does (ResourceExhausted), and
  // lives where its source lives. Errors as PauseSession's, plus
  // InvalidArgument for a copy.id in use.
  virtual Status ForkSession(const std::string& id, const SessionSpec& copy) {
    return FailedPrecondition("this executor cannot fork sessions");
  }

  // Moving a paused session to another executor (a runner host that drains
  // hands its sessions to the others: docs/sessions.md, "When a runner host
  // drains"). ExportSession reads session `id`'s image from `offset` on, at
  // most SessionImageChunk::kMaxBytes at a time; the first read (offset 0)
  // pauses a live session first and marks it moving: from then on its
  // cells, checkpoints and forks here are refused with E_SESSION_BUSY
  // ("moving to another runner host") until CloseSession (the move
  // succeeded) or ResumeSession (it failed: the session goes on here).
  // Errors as PauseSession's, plus InvalidArgument for an offset past the end.
  virtual StatusOr<SessionImageChunk> ExportSession(const std::string& id, uint64_t offset) {
    return FailedPrecondition("E_SESSION_NOT_PAUSABLE: this executor cannot move sessions");
  }
  // Takes a moved session: `data` is the image's bytes at `offset` (chunks
  // in order, from 0); `last` ends it, and the session is then a paused
  // session here under spec.id, restored by its next cell. A chunk out of
  // order, an image larger than a session's may be, a spec whose language
  // cannot be restored here, or a spec.id in use are refused (and the
  // partial image deleted); ResourceExhausted as OpenSession's.
  virtual Status ImportSession(const SessionSpec& spec, uint64_t offset, const std::string& data, bool last) {
    return FailedPrecondition("E_SESSION_NOT_PAUSABLE: this executor cannot take moved sessions");
  }
  // A session that moved from runner host `from` to runner host `to`
  // (remote/runner_fleet.h, when a host drains); the handler records it
  // (sessions::SessionRegistry rewrites the book row, so every gateway
  // follows). Set once, before sessions are used; executors that never move
  // sessions ignore it.
  using SessionMovedFn = std::function<void(const std::string& id, const std::string& from, const std::string& to)>;
  virtual void SetSessionMovedHandler(SessionMovedFn handler) {}

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
