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
//
// Pause, resume, fork (languages with spec.session_checkpoints: the WASM
// tier's Python). Pause asks the interpreter for an image of its state (a
// snapshot turn: the guest's memory, its in-memory files and descriptors)
// written into a private file in `image_dir` (0600 in a 0700 dir) whose
// descriptor the turn lends it, and destroys the jail: a paused session
// holds no process, memory or cgroup. Resume (or the next Call, which
// resumes first) makes a new jail exactly as Open does, every layer
// included, starts the language's restore argv and lends it the image
// (read-only) in a restore turn, then deletes the file. The image
// is data read back by the same engine in a fresh jail: nothing of the old
// jail (pids, namespaces, cgroup) is restored, so nothing of it can be
// weaker. Fork snapshots a live or paused session and restores a copy into
// a new session; the source goes on unchanged.
#ifndef AIRLOCK_RUNTIMES_SANDBOX_SESSION_H_
#define AIRLOCK_RUNTIMES_SANDBOX_SESSION_H_

#include <atomic>
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
  // `image_dir`: where Pause writes images (a private directory the
  // caller made and removes); empty: Pause and Fork refuse.
  static StatusOr<std::unique_ptr<SandboxSession>> Open(jail::JailHost& host, const LanguageSpec& spec,
                                                        const jail::JailConfig& config,
                                                        const jail::ExecRequest& start,
                                                        std::string image_dir = "");
  // Removes a paused session's image. The jail goes with its owner
  // (TakeJail first to tear it down elsewhere).
  ~SandboxSession();
  SandboxSession(const SandboxSession&) = delete;
  SandboxSession& operator=(const SandboxSession&) = delete;

  // Checkpoints the session to disk and destroys its jail (above). OK when
  // already paused. FailedPrecondition: the language cannot be paused, no
  // image_dir, the session is lost, or the image could not be made or
  // written (the session then goes on, live, unless the snapshot turn
  // itself failed, which loses it). Every refusal's message starts with
  // its code: "E_SESSION_NOT_PAUSABLE: ", "E_SESSION_BUSY: " (a call is
  // running), "E_SESSION_LOST: ".
  Status Pause();
  // Restores a paused session now (OK and nothing done when live). On
  // failure the session is lost: later calls get E_SESSION_LOST with the
  // reason, the status says it too (FailedPrecondition). The new jail's
  // init dies with the thread that made it (PDEATHSIG): call this (and
  // Fork) on a thread that outlives the session, as LocalExecutor does on
  // its session maker; Call resumes by itself only as a fallback.
  Status Resume();
  // A new live session (its own jail, made as Open makes one) holding a
  // copy of this one's state; this one stays as it was (live or paused).
  // Errors as Pause's; a failed restore loses only the copy.
  StatusOr<std::unique_ptr<SandboxSession>> Fork();

  // A paused session found on disk (a runner's persistent image directory,
  // LocalExecutor::AdoptPausedSessions): the image at `image_path` (in
  // `image_dir`), no jail until Resume or a Call. Arguments as Open's,
  // `start.argv` already set (the session argv).
  static std::unique_ptr<SandboxSession> Adopt(jail::JailHost& host, const LanguageSpec& spec,
                                               const jail::JailConfig& config, const jail::ExecRequest& start,
                                               std::string image_dir, std::string image_path);

  // For a persistent image directory: every image this session's Pause
  // writes gets a manifest beside it, "<image minus .image>.json":
  // {"session": `session_json`, "image": name, "paused_at": unix seconds},
  // removed with the image.
  void set_manifest(std::string session_json);
  std::string manifest();
  // Leaves a paused session's image and manifest on disk when it is
  // destroyed (a runner stopping over a persistent image directory).
  void KeepImage();
  // The manifest path of an image path ("x.image" -> "x.json").
  static std::string ManifestPathFor(const std::string& image_path);
  // Writes a paused session's manifest (set_manifest) beside its image now,
  // as Pause does for the images it writes: for an image that came from
  // elsewhere (LocalExecutor::ImportSession). OK and nothing written when
  // no manifest is set; FailedPrecondition when live or not written.
  Status WriteManifest();
  // A new image file's path in `dir` ("<random>.image", as Pause names its
  // images; nothing is created).
  static StatusOr<std::string> NewImagePath(const std::string& dir);
  // A paused session's image file; "" when live (or lost). Waits for a call
  // in progress.
  std::string image_path();

  bool pausable() const { return spec_.session_checkpoints && !image_dir_.empty(); }
  bool paused() const { return paused_; }

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
  SandboxSession(const LanguageSpec& spec, uint64_t memory_mb, jail::JailHost& host, const jail::JailConfig& config,
                 const jail::ExecRequest& start, std::string image_dir);
  // Marks the session lost and kills its jail; `result` becomes the call's answer.
  void Lose(RunResult& result, const std::string& reason);
  // With mu_ held: one turn of the live jail, cancellable meanwhile by
  // TakeJail (running_ is `cancel` while it runs).
  jail::TurnResult TurnLocked(const jail::TurnRequest& turn, CancelToken& cancel);
  // Lose, for the paths that answer with a Status.
  Status LoseStatus(const std::string& reason);
  // With mu_ held. Saves the live session to a new file at `path` (a
  // snapshot turn; the jail is frozen again after it); no file is left on
  // failure. A failed turn loses the session.
  Status SnapshotLocked(const std::string& path);
  // With mu_ held: a new jail, started waiting for a restore turn, given
  // the image at `path`; jail_ on success. The caller decides what a
  // failure loses.
  Status RestoreLocked(const std::string& path);
  // With mu_ held: Resume's work.
  Status ResumeLocked();
  // With mu_ held: the manifest of the image at `path` beside it, unless
  // none is set; false when it could not be written (nothing is left).
  bool WriteManifestLocked(const std::string& path);
  // Why Pause, Resume or Fork (`checkpoint`: Pause and Fork) must refuse
  // now, given their try-lock of mu_; OK when they may go on.
  Status Refusal(bool checkpoint, const std::unique_lock<std::mutex>& lock) const;

  const LanguageSpec& spec_;
  const uint64_t memory_mb_;
  jail::JailHost& host_;
  const jail::JailConfig config_;
  const jail::ExecRequest start_;  // argv expanded
  const std::string image_dir_;
  std::mutex mu_;  // one cell at a time; guards the fields below
  std::unique_ptr<jail::Jail> jail_;
  std::string lost_reason_;  // non-empty once lost
  std::string image_path_;   // paused: the image file (removed by Resume and the destructor)
  std::mutex manifest_mu_;   // guards manifest_ (set while a Fork holds mu_)
  std::string manifest_;     // set_manifest's session json; "" when none is written
  bool keep_image_ = false;  // KeepImage: the destructor leaves image_path_ (and its manifest)
  std::atomic<bool> paused_ = false;
  std::mutex running_mu_;           // guards running_ (never held with mu_ waiting)
  CancelToken* running_ = nullptr;  // the cell in flight, if any
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_SANDBOX_SESSION_H_
