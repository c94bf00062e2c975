// `airlock-js --wasi MODULE ...`: runs a WASI command module (a C/C++
// program compiled to wasm32-wasi, or an interpreter such as python.wasm) in
// the embedded engine over an in-memory filesystem — the WASM tier's runner,
// started inside the native jail like any other program.
//
//   airlock-js --wasi MODULE.wasm [--heap-mb N] [--deadline-ms N] [--wasm-max-mb N]
//              [--max-output-bytes N] [--tar ARCHIVE=GUEST_DIR [--tar-index FILE]]...
//              [--work HOST_DIR=GUEST_DIR]
//              [--env NAME=VALUE]... [--wasm-baseline] [--resume-fd N] [--control-fd N]
//              [--code-cache FILE] [--restore]
//              -- ARGV0 [ARG...]
//
// The guest sees only the virtual filesystem: each --tar archive loaded
// read-only at GUEST_DIR (a runtime's standard library), and HOST_DIR's files
// copied into GUEST_DIR (writable, preopened there and at "/", so that it is
// the working directory for relative paths; in the jail this is /work). When
// the guest ends, the files under GUEST_DIR are written back to HOST_DIR, so
// output files are collected as in the native tier. Standard input is read
// up front; stdout and stderr are written when the guest ends.
//
// --wasm-baseline compiles the module with the baseline compiler only (no
// Ion tier in the background). --code-cache FILE loads the module's code
// from FILE instead of compiling it, if FILE was made for this module, cap
// and engine (WasmCodeCacheMain below); otherwise it compiles as usual.
// --tar-index FILE: the preceding --tar archive's index (wasm/tar_index.h),
// used instead of walking the archive's headers if made for this file.
// --resume-fd N: pre-started (below).
// --control-fd N: a session; host fd N is the guest's kGuestControlFd (or
// --control-guest-fd G: 0, in place of stdin, or 100-1023), the
// work dir is loaded at each turn's start and written back before the
// guest answers, and standard input is not read. --restore (with
// --control-fd, for --wasi-session): the first turn restores an image.
//
// Exit status: the guest's own (proc_exit or 0 when _start returns), 124 at
// the deadline, 137 when the engine runs out of memory, 134 for a trap (the
// message on stderr), 2 for bad usage or an invalid module.
#ifndef AIRLOCK_ENGINE_JS_WASI_RUNNER_H_
#define AIRLOCK_ENGINE_JS_WASI_RUNNER_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/js/js_engine.h"
#include "engine/js/wasm_command.h"
#include "wasm/wasi.h"

namespace airlock::engine::js {

// argv[1] is "--wasi"; `base` says how to start the engine (its
// self_hosted_cache).
int WasiMain(int argc, char** argv, const EngineOptions& base);

// `airlock-js --wasm-code-cache MODULE OUT [--wasm-max-mb N]`: compiles
// MODULE, capped as `--wasi --wasm-max-mb N` caps it, with Ion, and writes
// its code to OUT (wasm/code_cache_file.h) for `--wasi ... --code-cache OUT`.
// Runs no guest code. Exit 0 when written.
int WasmCodeCacheMain(int argc, char** argv);

// A session (--control-fd N): the guest reads its turns from, and answers
// on, this descriptor (host fd N behind it; src/runtimes/session_harness.cc
// names the same number). Far above the preopens, which wasi-libc finds by
// counting up from 3 until one is missing.
inline constexpr uint32_t kGuestControlFd = 1000;

// What a session's reactor driver (python_session.h) needs of the host
// beyond a command's: set for --control-fd runs, null otherwise.
struct WasiSessionHost {
  int control_fd = -1;
  // --restore: the first turn brings an image (the driver restores it
  // instead of starting the interpreter).
  bool restore = false;
  // Who may load an image: the module, its standard library trees and the
  // memory cap (their sizes and modification times).
  std::string image_key;
  // The guest's work dir written to the host's, as at a turn's end.
  std::function<Status()> sync_work;
};

// What runs the guest once its filesystem, WASI context and engine exist.
struct WasiGuest {
  JsEngine& engine;
  std::string_view module;                // the module's bytes, memory already capped (or `compiled`)
  std::vector<HostImport>& imports;       // the WASI preview1 imports; add more before instantiating
  wasm::WasiContext& wasi;
  const std::vector<std::string>& argv;   // the guest's argv (after --)
  // Pre-started (--resume-fd): a driver that does not let the guest read
  // the hand-over from stdin (Ruby) calls this once it has started up: it
  // waits for the hand-over, sets the deadline, reloads the work dir and
  // returns the run's arguments; the guest's stdin is then the run's own.
  // Empty when not pre-started.
  std::function<std::vector<std::string>()> hand_over;
  // The module, already compiled: loaded from --code-cache (wasm_code.h),
  // or null. When set, `module` is empty: pass both to WasmInstance::Create.
  JS::HandleObject compiled;
  WasiSessionHost* session = nullptr;
};
using WasiDriver = std::function<WasmOutcome(WasiGuest& guest)>;

// airlock-init's hand-over to a pre-started airlock-js (--resume-fd, both
// the JavaScript and the WASI modes): everything the fd delivers until EOF,
// "DEADLINE_MS\0ARG\0ARG\0...".
struct HandOver {
  uint64_t deadline_ms = 0;  // 0: none given
  std::string raw_args;      // the arguments as sent, each NUL-terminated
  std::vector<std::string> args;
};
// Reads the hand-over from `fd` (at most 16 MiB) and closes `fd`.
HandOver ReadHandOver(int fd);

// WasiMain with another way to run the module (a reactor such as ruby.wasm):
// the same flags, filesystem, limits, output and exit statuses; argv[1] is
// the mode flag ("--wasi-ruby"). WasiMain runs `_start` with RunWasmCommand.
int WasiMainWith(int argc, char** argv, const EngineOptions& base, const WasiDriver& driver);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_WASI_RUNNER_H_
