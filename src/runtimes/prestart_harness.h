// Harnesses for pre-started interpreters (LanguageSpec::prestart_argv).
//
// A warm pool starts an interpreter in a fresh jail ahead of any request
// (Jail::Start): it loads, then blocks reading fd 3. When a run arrives, the
// jail writes its input files, then writes the run's arguments to fd 3, each
// followed by a NUL byte, and closes it (Jail::Resume). The harness then
// turns the interpreter into what a cold `<interpreter> main.<ext> args...`
// would have been at its first line, and runs /work/main.<ext>:
//   python  sys.argv, sys.orig_argv, a fresh __main__ namespace (__file__,
//           __loader__, ...), compile + exec; an uncaught exception is
//           printed by sys.excepthook without the harness's frame, exit 1.
//           Before the hand-over it pays the compiler's first use and
//           gc.freeze()s the start-up objects (cheaper finalization).
//   node    process.argv, process.execArgv, Module.runMain (the same path
//           `node main.js` takes: require.main, stack traces, exit codes).
//   ruby    ARGV, $0, then main.rb evaluated at top level as "main.rb";
//           backtraces lose the harness's "-e:" lines, and a main.rb that
//           does not parse is reported as `ruby main.rb` reports it.
//   php     $argv, $argc, $_SERVER's script entries, then require main.php.
//   python in the WASM tier: as python, but the hand-over arrives on the
//           guest's stdin (WasmPythonPrestartHarness).
//   php in the WASM tier: as php, the hand-over on the guest's stdin
//           (WasmPhpPrestartHarness).
//   typescript: node's harness; main.js comes from esbuild run in a jail
//           of its own (local_executor.cc).
// JavaScript and Ruby in the WASM tier need no harness: airlock-js
// --resume-fd waits for the hand-over itself (js_main.cc, wasi_runner.h).
// Python ends the run without tearing the interpreter down: it joins
// non-daemon threads, runs atexit callbacks, drops the program's globals
// (files flushed and closed, __del__ run), flushes stdout and stderr, then
// os._exit()s with the status (anything unusual takes the normal exit).
// Known differences from a cold run, none a security matter: Python sees one
// more frame below __main__ (sys._getframe), a non-zero
// gc.get_freeze_count(), and objects kept only by other modules or cycles
// are not finalized at exit; Ruby's __dir__ is "." (not "/work"); PHP's
// uncaught-exception trace gains a "Command line code" line. Node has none:
// its cold run also starts from -e (NodeRunHarness), so both end stack
// traces in "[eval]" frames and both write stdout/stderr blocking. stdin,
// stdout, stderr, env, cwd, rlimits, seccomp and the jail are otherwise
// exactly those of a cold run.
//
// The harness is a convenience, not a boundary: it runs as the sandbox user
// under the run's seccomp policy, in a jail no other run ever uses.
#ifndef AIRLOCK_RUNTIMES_PRESTART_HARNESS_H_
#define AIRLOCK_RUNTIMES_PRESTART_HARNESS_H_

#include <string_view>

namespace airlock::runtimes {

std::string_view PythonPrestartHarness();  // for python3 -I -c
// For CPython in the WASM tier (airlock-js --wasi … --resume-fd 3 -- python
// -c): the hand-over arrives on the guest's stdin instead of fd 3 (a
// 10-digit length, the arguments, then the real stdin; wasi_runner.cc).
std::string_view WasmPythonPrestartHarness();
std::string_view NodePrestartHarness();    // for node -e
// Node's cold run: `node -e NodeRunHarness() /work/main.js args...` is
// `node main.js args...` (Module.runMain, argv, execArgv) with stdout and
// stderr blocking, as the pre-started node's: node's default (a non-blocking
// pipe, the rest queued in memory) lets a flood fill the program's memory
// before it meets the output limit.
std::string_view NodeRunHarness();
std::string_view RubyPrestartHarness();    // for ruby -e
std::string_view PhpPrestartHarness();     // for php -r
// For PHP in the WASM tier (airlock-js --wasi … --resume-fd 3 -- php -r):
// the hand-over arrives on the guest's stdin, as for CPython.
std::string_view WasmPhpPrestartHarness();

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_PRESTART_HARNESS_H_
