// Harnesses for session interpreters (sessions.h): one long-lived
// interpreter per session jail, driven turn by turn (jail::Jail::Turn).
//
// Protocol, on the interpreter's fd 3 (a socket to the supervisor):
//   supervisor -> harness   "<nonce> <code bytes> <stdin bytes>\n" code stdin
//   harness -> stdout, stderr  (the cell's output) then TurnEndMarker(nonce)
//   harness -> supervisor   "<nonce> <kind> <status>\n"
// kind is "ok" (the cell ran; status 0), "error" (an uncaught exception or a
// non-zero exit status of the shell's last command; status is the exit code
// a script would have had) or "exit" (the cell asked to exit with status:
// Python SystemExit, Ruby exit; the interpreter goes on). The nonce is fresh
// and random per turn. Before the cell the harness makes the turn's stdin
// its standard input (a file under /tmp, unlinked), and after it flushes
// its streams, so the marker comes after everything the cell wrote.
//
// Every harness runs as the sandbox user under the language's seccomp
// policy: it is a convenience, not a boundary. A cell can read or break
// the harness's state; all it can reach that way is its own session.
//
//   python      a notebook cell: the last expression's value is shown with
//               sys.displayhook (repr, None not shown, bound to _); top-level
//               await; tracebacks without the harness's frames
//   javascript  vm.runInThisContext in the main context (let/const persist,
//               as in the Node REPL); a cell with top-level await runs as an
//               async function (its declarations stay local); the
//               completion value shown with util.inspect
//   ruby        evaluated in one binding (local variables persist); the
//               value shown with inspect unless nil
//   php         eval() at global scope
//   bash        eval in the harness's shell (variables, functions, cwd
//               persist)
#ifndef AIRLOCK_RUNTIMES_SESSION_HARNESS_H_
#define AIRLOCK_RUNTIMES_SESSION_HARNESS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace airlock::runtimes {

// The harness texts (LanguageSpec::session_argv in languages.cc).
std::string_view PythonSessionHarness();  // for python3 -I -c
std::string_view NodeSessionHarness();    // for node -e
std::string_view RubySessionHarness();    // for ruby -e
std::string_view PhpSessionHarness();     // for php -r
std::string_view BashSessionHarness();    // for bash -c
// The native Python harness driven with hooks (code-mode sessions): the
// text defines nothing but calls _airlock_session(3, <hooks>), so it is
// appended to a text that defines the hooks object's class
// (runtimes/codemode/python_harness.py's _SessionHooks: a fresh __main__
// for the cells, descriptors passed with a turn, a final frame per cell).
std::string PythonSessionHarnessWithHooks(std::string_view hooks);
// For CPython in the WASM tier (airlock-js --wasi ... --control-fd 3 --
// python -c): the turns come over the guest's fd 1000, and a cell's stdin
// is an in-memory stream (WASI has no dup2).
// The same harness for python-session.wasm (engine/js/python_session.h):
// its loop is a generator that yields after each answer, bound to
// `_airlock_turn` (one turn per call) instead of being run, so that
// between turns no frame of it is on a stack.
std::string_view WasmPythonReactorSessionHarness();

// Checkpoint turns (SandboxSession::Pause/Fork, python_session.h): their
// messages, each sent with the image file's descriptor attached.
std::string SnapshotTurnMessage(const std::string& nonce);
std::string RestoreTurnMessage(const std::string& nonce);

std::string_view WasmPythonSessionHarness();
// For Ruby in the WASM tier (airlock-js --wasi-ruby ... --control-fd 3
// --control-guest-fd 0 -- ruby -e): the native harness over the guest's
// fd 0 (ruby.wasm's wasi-vfs passes only 0-2 through), stdin a StringIO.
std::string_view WasmRubySessionHarness();
// For PHP in the WASM tier: the native harness over the guest's fd 1000.
std::string_view WasmPhpSessionHarness();

// The message that starts one turn.
std::string SessionTurnMessage(const std::string& nonce, const std::string& code, const std::string& stdin_data);

// What the harness writes to stdout and stderr when the cell is done.
std::string TurnEndMarker(const std::string& nonce);

struct SessionReply {
  enum class Kind { kOk, kError, kExit };
  Kind kind = Kind::kOk;
  int status = 0;
};

// Parses a reply line; nullopt when it is malformed or names another turn.
std::optional<SessionReply> ParseSessionReply(const std::string& line, const std::string& nonce);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_SESSION_HARNESS_H_
