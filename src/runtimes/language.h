// A language is data: where its source goes, how it is compiled (if at all),
// how it is run, and what it needs from the host. Adding a language means
// adding one LanguageSpec to BuiltinLanguages() in languages.cc.
#ifndef AIRLOCK_RUNTIMES_LANGUAGE_H_
#define AIRLOCK_RUNTIMES_LANGUAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jail/jail.h"
#include "jail/seccomp_policy.h"

namespace airlock::runtimes {

struct CompileStep {
  std::vector<std::string> argv;  // runs in /work with the source file present
  uint64_t timeout_ms = 30'000;
  // The file the step produces in /work (what the run needs), for the build
  // cache (build_cache.h); empty: never cached.
  std::string artifact;
  bool artifact_executable = false;
};

// Standard headers worth precompiling for a compile step (pch_cache.h).
struct PchSpec {
  // The compiler and every flag of the compile step that a precompiled
  // header must match (g++ refuses a .gch built with other ones).
  std::vector<std::string> argv;
  std::vector<std::string> headers;  // e.g. "iostream", "bits/stdc++.h"
};

struct LanguageSpec {
  std::string name;          // the API name: "python"
  std::string display_name;  // "Python"
  std::string source_file;   // file the code is written to: "main.py"
  std::vector<std::string> version_argv;  // host command printing the version
  std::optional<CompileStep> compile;
  // Precompiled headers for the compile step (native C++), when the
  // executor has a PchCache.
  std::optional<PchSpec> pch;
  // User args are appended. "{timeout_ms}" and "{heap_mb}" (the memory
  // limit minus 64 MiB of headroom, at least 16) are replaced per run.
  std::vector<std::string> run_argv;
  // A warm pool's pre-started form of run_argv (prestart_harness.h): the
  // interpreter with a harness that waits on fd 3 for the run's arguments,
  // then runs source_file as run_argv would. Empty: runs are never
  // pre-started. Not for code mode. With a compile step (TypeScript), the
  // compiler runs in a jail of its own and the artifact is handed over with
  // the input files. "{heap_mb}" is replaced as in run_argv; "{timeout_ms}"
  // cannot be.
  std::vector<std::string> prestart_argv;
  // A session's interpreter (session_harness.h): started once per session
  // jail and driven turn by turn. Empty: the language has no sessions.
  std::vector<std::string> session_argv;
  // Whether a session cell may be given stdin.
  bool session_stdin = true;
  // Checkpoints (SandboxSession::Pause/Resume/Fork): session_argv's
  // interpreter answers a snapshot turn with an image of its whole state
  // (session_harness.h SnapshotTurnMessage), and the same argv with
  // "--restore" before its "--" starts one that waits for a restore turn
  // bringing such an image (engine/js/python_session.h). False: the
  // language's sessions cannot be paused or forked (all but the WASM tier's
  // Python; docs/sessions.md says why).
  bool session_checkpoints = false;
  // The pre-started program learns the run's timeout at the hand-over, as
  // its first argument (airlock-js --resume-fd: its engine's deadline).
  bool prestart_takes_timeout = false;
  std::vector<std::string> extra_env;
  std::vector<jail::BindMount> binds;  // beyond jail_fs.h's base set
  // Operator package directories bound into this variant (package_dirs.h),
  // by name, sorted. A compile step's artifact is then never cached: it may
  // hold code bundled from them, which changes without the program changing.
  std::vector<std::string> packages;
  jail::SeccompOptions seccomp;
  uint64_t default_timeout_ms = 10'000;
  uint64_t default_memory_mb = 256;
  uint32_t max_pids = 64;
  std::string notes;
  // A code-mode runtime (bridge.h): used only for requests with code_mode,
  // never listed as a run_code language.
  bool code_mode = false;
  // The isolation tier: "native" (the program runs as a process in the
  // jail) or "wasm" (it runs inside the embedded engine, itself in the jail,
  // and sees no host system interface at all).
  std::string isolation = "native";
  // Exit codes with which the engine (airlock-js) reports its own limits
  // (0: none): mapped to timeout and memory_limit.
  int engine_exit_deadline = 0;
  int engine_exit_out_of_memory = 0;
  // The WASM tier's interpreter module on the host (python.wasm, ...) when
  // its compiled code can be cached (wasm_code_store.h). Its argvs then hold
  // "--code-cache", "{code_cache}": the code's path in the jail, or neither
  // element while there is no code for the run's heap.
  std::string wasm_module;
  // Its session module (python-session.wasm) when that differs from
  // wasm_module: cached under "<name>-session" and named in the session
  // argv by "--code-cache", "{session_code_cache}".
  std::string wasm_session_module;
  // Its standard-library tar on the host (python-stdlib.tar) when the store
  // keeps its index (wasm/tar_index.h). Its argvs then hold "--tar-index",
  // "{tar_index}" after that --tar: the index's path in the jail, or
  // neither element while there is none.
  std::string wasm_tar;
};

// Every language airlock knows, in display order.
std::vector<LanguageSpec> BuiltinLanguages();

// The code-mode runtimes ("javascript" on the embedded engine at
// `airlock_js_path`, "python" with the bridge harness); JavaScript is left
// out when `airlock_js_path` is empty.
std::vector<LanguageSpec> CodeModeLanguages(const std::string& airlock_js_path);

// The WASM tier's languages (isolation "wasm"): JavaScript directly in the
// embedded SpiderMonkey engine (console only, no bridge); C and C++ compiled
// to wasm32-wasi; Python from the CPython WASI build in `wasm_cache_dir`
// (scripts/wasm/build_python.sh: python/python.wasm, python-stdlib.tar,
// MANIFEST); Ruby from ruby.wasm in `wasm_cache_dir`
// (scripts/wasm/install_ruby.sh: ruby/ruby.wasm, MANIFEST); PHP from the PHP
// WASI build in `wasm_cache_dir` (scripts/wasm/build_php.sh: php/php.wasm,
// MANIFEST). All are left out when `airlock_js_path` is empty; Python, Ruby
// and PHP when not cached.
std::vector<LanguageSpec> WasmTierLanguages(const std::string& airlock_js_path, const std::string& wasm_cache_dir);

// The WASM interpreter cache: $AIRLOCK_WASM_CACHE, else /var/cache/airlock/wasm.
std::string DefaultWasmCacheDir();

// Where the CPython WASI build appears inside the jail.
inline constexpr char kJailWasmPythonDir[] = "/opt/airlock/wasm-python";

// Where the cached ruby.wasm appears inside the jail.
inline constexpr char kJailWasmRubyDir[] = "/opt/airlock/wasm-ruby";

// Where the PHP WASI build appears inside the jail.
inline constexpr char kJailWasmPhpDir[] = "/opt/airlock/wasm-php";

// Where airlock-js appears inside the jail.
inline constexpr char kJailAirlockJsPath[] = "/opt/airlock/airlock-js";

// Whether the language's interpreter or compiler exists on this host.
bool IsInstalled(const LanguageSpec& spec);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_LANGUAGE_H_
