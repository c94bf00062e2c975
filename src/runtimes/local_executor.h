// LocalExecutor: runs code in jails owned by this process.
//
// Used by the runner process (behind the MCP server) and by `airlock run`.
// Each Run() gets a fresh jail: the source and input files are written to
// /work, a compile step runs first for compiled languages (its diagnostics
// go to compile_output, apart from the program's output), then the program
// runs with the request's stdin and args; requested output files are
// collected; the jail is destroyed. Limits come from the request, bounded by
// the executor's maxima.
#ifndef AIRLOCK_RUNTIMES_LOCAL_EXECUTOR_H_
#define AIRLOCK_RUNTIMES_LOCAL_EXECUTOR_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "base/private_dir.h"
#include "base/unique_fd.h"
#include "jail/host.h"
#include "runtimes/build_cache.h"
#include "runtimes/code_executor.h"
#include "runtimes/jail_pool.h"
#include "runtimes/jail_maker_thread.h"
#include "runtimes/jail_reaper.h"
#include "runtimes/language.h"
#include "runtimes/package_dirs.h"
#include "runtimes/pch_cache.h"
#include "runtimes/sandbox_session.h"
#include "runtimes/wasm_code_store.h"

namespace airlock::runtimes {

struct ExecutorLimits {
  uint64_t max_timeout_ms = 60'000;
  uint64_t max_memory_mb = 2048;
  uint64_t max_output_bytes = 1u << 20;      // per stream
  uint64_t max_input_file_bytes = 8u << 20;  // all input files together
  uint32_t max_input_files = 64;
  uint32_t max_output_files = jail::OutputFileLimits{}.max_files;
  uint64_t max_output_file_bytes = jail::OutputFileLimits{}.max_file_bytes;
  // All output files of one run together: init stops reading at this budget
  // and lists what it left out (RunResult::files_skipped).
  uint64_t max_output_files_total_bytes = jail::OutputFileLimits{}.max_total_bytes;
  uint64_t workdir_bytes = 64u << 20;
  uint64_t max_code_bytes = 1u << 20;
  uint64_t max_stdin_bytes = 8u << 20;
  uint32_t max_sessions = 256;  // a backstop; the server keeps its own, lower limits
  // A session that can be paused (SandboxSession::pausable: the WASM
  // tier's Python) and has had no call, resume or fork for this long is
  // paused by the executor itself (config sessions.pause_after_s); 0: never.
  uint64_t pause_after_s = 300;
  // Where paused sessions' images live (config sessions.image_dir). Empty:
  // a private temporary directory removed with the executor (sessions end
  // with the runner). Set: a directory of the runner's own (made 0700 if
  // missing; refused unless it is owned by the runner's user and closed to
  // everyone else) that outlives it: the executor's destruction pauses
  // every live pausable session into it and leaves the images there, with
  // a manifest each, and AdoptPausedSessions takes them back.
  std::string session_image_dir;
  // Adopted images older than this are deleted instead (their gateway is
  // likely gone); a session's own max_lifetime_s, when set, is used first.
  uint64_t adopted_image_ttl_s = 7 * 86400;
};

class LocalExecutor : public CodeExecutor {
 public:
  // `host` must outlive the executor. Fails if a seccomp policy cannot be built.
  static StatusOr<std::unique_ptr<LocalExecutor>> Create(jail::JailHost& host, ExecutorLimits limits = {},
                                                         std::vector<LanguageSpec> languages = BuiltinLanguages());
  // Stops the idle pauser (a pause it is taking is cancelled), then
  // destroys every session's jail and image, then the image directory.
  ~LocalExecutor() override;

  RunResult Run(const RunRequest& request, const ProgressFn& progress, CancelToken& cancel,
                BridgeHandler* bridge = nullptr) override;
  std::vector<LanguageInfo> Languages() override;

  // Sessions (code_executor.h): each its own jail, built like a one-shot
  // run's at the session's memory limit, with the language's session
  // interpreter running; at most max_sessions at once (ResourceExhausted).
  Status OpenSession(const SessionSpec& spec) override;
  // A paused session has no jail: closing it deletes its image. An import
  // of `id` in progress (ImportSession) is dropped too (OK).
  Status CloseSession(const std::string& id) override;
  // Checkpoints (code_executor.h) with SandboxSession::Pause/Resume/Fork.
  // Images go to a private directory (0700, under $TMPDIR or /tmp) made
  // when the first session that can be paused opens, and removed with
  // everything in it when the executor goes. Jails a resume or fork makes
  // are made on the session maker thread, as Open's are; a cell of a paused
  // session resumes it there first. A fork counts against max_sessions;
  // copy.id names it, everything else is its source's.
  Status PauseSession(const std::string& id) override;
  Status ResumeSession(const std::string& id) override;
  Status ForkSession(const std::string& id, const SessionSpec& copy) override;

  // Moving a paused session to another runner host (code_executor.h).
  //
  // ExportSession at offset 0 pauses the session (through the same use
  // discipline as PauseSession: it waits for an idle pause of it, and is
  // refused with E_SESSION_BUSY while a call of it runs) and marks it
  // moving; the chunk carries the session's SessionSpec (as it was opened,
  // forked, adopted or imported here). Later offsets read on, from the
  // image file, while the session stays moving and paused; an offset past
  // the image's end is InvalidArgument (Status has no OutOfRange). While
  // moving: cells get E_SESSION_BUSY ("moving to another runner host"),
  // PauseSession is a no-op, ForkSession is refused, the idle pauser leaves
  // it alone; ResumeSession ends the move (it failed: the session goes on
  // here), CloseSession ends the session and deletes its image (the move
  // succeeded). A runner stopping over a persistent image directory keeps
  // a moving session's image like any paused one's.
  StatusOr<SessionImageChunk> ExportSession(const std::string& id, uint64_t offset) override;
  // ImportSession stages the image in a private file beside the images
  // ("<random>.image.part" in the image directory, 0600) and, with `last`,
  // makes it a paused session under spec.id: its next cell restores it in
  // a new jail. Offset 0 starts a staging (checking the language can be
  // restored here, the id is free and there is room, stagings counted; one
  // of the same id staged before is replaced, and stagings no chunk
  // continued for kImportStaleAfter are dropped); every later chunk must
  // continue it exactly (only its spec.id is looked at: the first chunk's
  // spec is the session's). An image larger than a session may write
  // (limits.workdir_bytes, its RLIMIT_FSIZE) is refused. `last` checks the
  // image was made by this runner's build of the interpreter (its header's
  // key, wasm::SessionImageKey: module, standard library, memory cap, each
  // file by size and mtime; else FailedPrecondition E_SESSION_LOST), and,
  // over a persistent image directory, writes its manifest (a runner
  // restarted before its next call adopts it). Every refusal drops the
  // staging.
  Status ImportSession(const SessionSpec& spec, uint64_t offset, const std::string& data, bool last) override;
  // An import no chunk has continued for this long is dropped.
  static constexpr std::chrono::seconds kImportStaleAfter{60};
  // {"pool": JailPool::Stats or null, "sessions": open sessions (paused
  // included), "paused_sessions": paused ones}.
  nlohmann::json Health() override;
  size_t session_count();
  // The image directory, or "" before the first pausable session opened.
  std::string session_image_dir();

  // With limits.session_image_dir: takes the paused sessions a previous
  // runner left in it (their manifests and images) as paused sessions of
  // this one, under their ids: the next call or resume restores each in a
  // new jail. Call once, after the languages and stores are enabled (the
  // sessions' argv and binds come from them). Manifests that name no
  // language with checkpoints here, lost their image or are older than
  // their lifetime are deleted with their image. An adopted session that
  // no gateway uses by the end of its lifetime (from its pause: the
  // session's max_lifetime_s, else limits.adopted_image_ttl_s) is closed
  // then, image and all. Returns how many were adopted.
  size_t AdoptPausedSessions();

  const LanguageSpec* Find(const std::string& name, bool code_mode = false,
                           const std::string& isolation = "native") const;
  // The code-mode runtime of `name` (one per language), or null.
  const LanguageSpec* FindCodeMode(const std::string& name) const;

  // From now on runs take pre-created jails from a pool (jail_pool.h) when
  // one of their exact shape is ready, else create one as before. The
  // languages in `warm` are warmed at their default limits now: "python"
  // its native tier, "python:wasm" its WASM tier, "code:javascript" code
  // mode's JavaScript engine.
  // With `prestart`, a pooled jail of a language that has prestart_argv
  // (python, javascript, ruby, php; code mode's javascript and python) also
  // holds its interpreter, started and waiting (Jail::Start; code mode's
  // with its bridge already its fd 3, Jail::StartBridged); a run hands it
  // the program (Jail::Resume, and the bridge to the run's BridgeRelay)
  // instead of starting the interpreter. Pool misses still run cold.
  void EnablePool(const JailPoolOptions& options, const std::vector<std::string>& warm, bool prestart = true);
  // How many runs resumed a pre-started interpreter.
  uint64_t prestarted_runs() const { return prestarted_runs_.load(); }
  // Null when no pool is enabled.
  const JailPool* pool() const { return pool_.get(); }

  // From now on compile steps with an artifact (C, C++, TypeScript; both
  // tiers) are looked up in `cache` first: a hit writes the stored artifact
  // to /work and skips the compiler (compile_output is the stored
  // diagnostics, compile_ms 0); a successful compile is stored.
  void EnableBuildCache(std::unique_ptr<BuildCache> cache) { build_cache_ = std::move(cache); }
  const BuildCache* build_cache() const { return build_cache_.get(); }

  // From now on C++ compile steps use precompiled standard headers from
  // `cache` (pch_cache.h) when the program starts with one: its directory
  // is bound read-only into those languages' jails. Call before
  // EnablePool (a jail's binds are part of its shape). Languages named in
  // `warm` have their headers built now, in the background.
  void EnablePrecompiledHeaders(std::unique_ptr<PchCache> cache, const std::vector<std::string>& warm = {});
  PchCache* pch_cache() const { return pch_.get(); }

  // From now on the WASM tier's interpreters (LanguageSpec::wasm_module) load
  // their compiled code from `store` (wasm_code_store.h) once it is written,
  // and every airlock-js (WASM tier, code mode) its encoded self-hosted
  // code: the directory is bound read-only into their jails. The files are
  // written now, in the background: the self-hosted code first, then the
  // module code for each language's default memory and for the memory sizes
  // in `memory_mb` (the pool's extra sizes). Call before EnablePool (a
  // jail's binds are part of its shape).
  void EnableWasmCodeStore(std::unique_ptr<WasmCodeStore> store, const std::vector<uint64_t>& memory_mb = {});
  WasmCodeStore* wasm_code_store() const { return wasm_code_.get(); }

  // From now on a run or session that names operator package directories
  // (RunRequest::packages, SessionSpec::packages) gets them bound read-only
  // into its native jail (package_dirs.h); a name `dirs` lacks is refused.
  void EnablePackageDirs(std::unique_ptr<PackageDirs> dirs) { package_dirs_ = std::move(dirs); }

 private:
  LocalExecutor() = default;
  static std::pair<bool, bool> PolicyKey(const jail::SeccompOptions& o);
  // Whether pooled runs of `spec` take pre-started interpreters (code
  // mode: engines started with their bridge).
  bool Prestarts(const LanguageSpec& spec) const;
  // The pool's maker for a jail of `config` whose interpreter is started.
  JailPool::Maker PrestartMaker(const LanguageSpec& spec, const jail::JailConfig& config);
  // `pooled` if there is one (a pool hit), else a jail made now.
  StatusOr<std::unique_ptr<jail::Jail>> PooledOrNew(std::unique_ptr<jail::Jail> pooled,
                                                    const jail::JailConfig& config);
  RunResult RunInJail(const LanguageSpec& spec, const RunRequest& request, const ProgressFn& progress,
                      CancelToken& cancel, BridgeHandler* bridge);
  // `argv` (a language's run, prestart or session command) for a run of
  // `spec` with `memory_mb` and `timeout_ms` ("{timeout_ms}", "{heap_mb}",
  // "{code_cache}", "{tar_index}" replaced; language.h), airlock-js's with
  // `--self-hosted-cache FILE` first once the store has it.
  std::vector<std::string> ExpandArgv(const LanguageSpec& spec, std::vector<std::string> argv, uint64_t timeout_ms,
                                      uint64_t memory_mb) const;
  // `base`, or its variant with the operator package directories `names`
  // (kept for the executor's life: pooled makers and sessions hold it).
  StatusOr<const LanguageSpec*> WithPackages(const LanguageSpec* base, const std::vector<std::string>& names);
  RunResult RunInSession(const RunRequest& request, const ProgressFn& progress, CancelToken& cancel,
                         BridgeHandler* bridge);

  using Clock = std::chrono::steady_clock;
  // One open session, with what the idle pauser needs.
  struct SessionEntry {
    std::shared_ptr<SandboxSession> session;
    Clock::time_point last_used;  // when a use (a call, pause, resume, fork) last began or ended
    int calls_in_flight = 0;
    // Adopted (AdoptPausedSessions) and not used since: closed at this time,
    // when no gateway has asked for it (its book, and so its lifetime, went
    // with a gateway that stopped).
    std::optional<Clock::time_point> orphan_until;
    // As the gateway opened it (or forked, adopted, imported): what an
    // export hands to the next runner host.
    SessionSpec spec;
    // Exported (ExportSession) and not yet closed or resumed.
    bool moving = false;
  };
  // The session `id` (null if none) with one more use of it in flight
  // (calls_in_flight: the idle pauser leaves it alone), once an idle pause
  // of it in progress has ended. Every non-null return is ended by
  // EndSessionUse (SessionUse), which restarts its idle clock. `moving`,
  // when given, is set to whether the session is moving (seen with the use
  // begun, so an export that starts later finds this use in flight).
  std::shared_ptr<SandboxSession> BeginSessionUse(const std::string& id, bool* moving = nullptr);
  void EndSessionUse(const std::string& id);
  class SessionUse {
   public:
    SessionUse(LocalExecutor& ex, const std::string& id) : ex_(ex), id_(id) {}
    ~SessionUse() { ex_.EndSessionUse(id_); }
    SessionUse(const SessionUse&) = delete;
    SessionUse& operator=(const SessionUse&) = delete;

   private:
    LocalExecutor& ex_;
    const std::string id_;
  };
  // The jail and start of a session of `lang` for `spec` (OpenSession,
  // AdoptPausedSessions).
  void SessionStartFor(const LanguageSpec& lang, const SessionSpec& spec, jail::JailConfig* config,
                       jail::ExecRequest* start);
  // Where sessions of `spec` keep their images: "" when `spec` cannot be
  // checkpointed (or the directory cannot be made; its sessions then
  // refuse to pause). Makes the directory the first time.
  std::string ImageDirFor(const LanguageSpec& spec);
  // Adds `session` under spec.id (sessions_mu_ held) and starts the idle
  // pauser when it can be paused.
  void AddSessionLocked(const SessionSpec& spec, std::unique_ptr<SandboxSession> session);
  // Why a new session `id` cannot be added now (sessions_mu_ held): the id
  // is taken (InvalidArgument) or the runner is full (ResourceExhausted);
  // `staged` more are on their way (imports).
  Status RoomForLocked(const std::string& id, size_t staged = 0) const;
  // The language a session of `spec` restored here runs, or
  // FailedPrecondition E_SESSION_NOT_PAUSABLE when it cannot be restored
  // here (AdoptPausedSessions, ImportSession).
  StatusOr<const LanguageSpec*> RestorableLanguage(const SessionSpec& spec);

  // An import in progress (ImportSession): its staging file, removed with it
  // unless renamed to the image it becomes.
  struct ImportStaging {
    ImportStaging() = default;
    ImportStaging(ImportStaging&& other) noexcept;  // `other` keeps no file
    ImportStaging& operator=(ImportStaging&&) = delete;
    ~ImportStaging();
    SessionSpec spec;
    const LanguageSpec* lang = nullptr;
    std::string dir;   // the image directory
    std::string path;  // "<dir>/<random>.image.part"
    UniqueFd fd;
    uint64_t written = 0;
    Clock::time_point last_chunk;
  };
  // Offset 0: a new staging of spec.id, once it may be (RestorableLanguage,
  // RoomForLocked); stale ones, and one of the same id, are dropped first.
  StatusOr<ImportStaging> StartImport(const SessionSpec& spec);
  // A later chunk: the staging of `id`, taken out of imports_ while the
  // chunk is written (ImportSession puts it back unless it was the last).
  StatusOr<ImportStaging> TakeImport(const std::string& id);
  // ExportSession at offset 0: session `id` paused and marked moving, its
  // spec (ToJson) in `spec_json`; refused as PauseSession, or
  // E_SESSION_BUSY while another use of it is in flight.
  StatusOr<std::shared_ptr<SandboxSession>> StartMove(const std::string& id, std::string* spec_json);
  // `last`: the staged image as a paused session under its spec's id.
  Status FinishImport(ImportStaging staging);
  // The idle pauser's loop: pauses each pausable live session idle for
  // limits_.pause_after_s, and closes adopted sessions no one used by their
  // orphan_until, sleeping until the next one is due.
  void PauseIdleSessions();
  // Starts the pauser's thread unless it runs (sessions_mu_ held).
  void StartPauserLocked();

  jail::JailHost* host_ = nullptr;
  ExecutorLimits limits_;
  std::vector<LanguageSpec> languages_;  // installed ones only
  // Compiled once per distinct set of seccomp options; languages share them.
  std::map<std::pair<bool, bool>, jail::BpfProgram> policies_;
  std::unique_ptr<BuildCache> build_cache_;
  std::unique_ptr<PchCache> pch_;
  std::unique_ptr<WasmCodeStore> wasm_code_;
  // Used jails are destroyed here, off the request path; destroyed (and
  // drained) after the pool.
  JailReaper reaper_;
  // Session jails are made here: they outlive the request that opened them.
  JailMakerThread session_maker_;
  // Where paused sessions' images live (made on first use); destroyed
  // after the sessions, whose images are in it.
  std::mutex image_dir_mu_;
  std::unique_ptr<PrivateDir> image_dir_;
  bool image_dir_failed_ = false;  // told once; pausable sessions then refuse
  // Imports in progress by session id; their files go with them (before
  // the image directory). A chunk being written is taken out meanwhile.
  std::mutex imports_mu_;
  std::map<std::string, ImportStaging> imports_;
  // Open sessions by id; destroyed (their jails killed) before the reaper.
  std::mutex sessions_mu_;  // guards sessions_ and the pauser's fields below
  std::map<std::string, SessionEntry> sessions_;
  std::condition_variable pauser_cv_;  // a session added or idle again, a pause ended, or stopping
  bool pauser_stopping_ = false;
  std::shared_ptr<SandboxSession> pausing_;  // the session the pauser is pausing now
  std::thread pauser_;  // started with the first pausable session; joined by the destructor
  std::vector<uint64_t> pooled_memory_mb_;  // JailPoolOptions::extra_memory_mb
  std::unique_ptr<JailPool> pool_;  // before nothing that uses it; destroyed first
  bool prestart_ = false;
  std::atomic<uint64_t> prestarted_runs_{0};
  std::unique_ptr<PackageDirs> package_dirs_;
  std::mutex variants_mu_;
  std::map<std::string, std::unique_ptr<LanguageSpec>> variants_;  // by WithPackages' key
  std::mutex versions_mu_;
  std::map<std::string, std::string> versions_;
};

// Validates a request against the executor's rules; the message names the
// offending field. Exposed for tests.
Status ValidateRequest(const RunRequest& request, const ExecutorLimits& limits,
                       const std::vector<LanguageSpec>& languages);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_LOCAL_EXECUTOR_H_
