// `airlock-js --session --control-fd N [--heap-mb N]`: the WASM tier's
// JavaScript session interpreter. One engine, one global, driven turn by
// turn over fd N (a socket to the jail's supervisor) with the session
// protocol of src/runtimes/session_harness.h:
//
//   supervisor -> here   "<nonce> <code bytes> <stdin bytes>\n" code stdin
//   here -> stdout, stderr  the cell's output, then "\x1eairlock-turn-end:<nonce>\x1e"
//   here -> supervisor   "<nonce> ok 0\n" or "<nonce> error 1\n"
//
// A cell runs as a classic script in the one global, so `var`, functions
// and top-level `let`/`const`/`class` persist (a second declaration of the
// same name is an error, as in a REPL); its completion value, unless
// undefined, is printed as console.log prints it (then the promise jobs
// it queued run). A cell with top-level
// `await` (one that does not parse as a script and mentions await) runs as
// an async function body: awaited, its declarations local to it. Queued
// promise jobs run before the turn ends. An uncaught exception is printed
// ("Uncaught ...") and ends the cell, not the session; the engine running
// out of memory ends the interpreter (exit 3), which loses the session.
// There is no stdin (the executor refuses one for this language), no
// deadline of its own (the turn's clock, in the jail, ends a cell that
// runs too long) and nothing but the ECMAScript built-ins and console.
#ifndef AIRLOCK_ENGINE_JS_JS_SESSION_H_
#define AIRLOCK_ENGINE_JS_JS_SESSION_H_

#include "engine/js/bridge_client.h"
#include "engine/js/js_engine.h"

namespace airlock::engine::js {

// argv[1] is "--session"; `base` says how to start the engine (its
// self_hosted_cache).
int SessionMain(int argc, char** argv, const EngineOptions& base);

// Runs turns read from `control_fd` until it ends (exit 0) or the engine
// stops (its exit status). The console must be installed. `bridge` (code
// mode, `--code-mode 1`): each turn's message brings the cell's bridge
// socket (SCM_RIGHTS); the cell gets `tools` on it, a value that is a
// promise is awaited, one final frame ({"op":"result","value":V} with the
// cell's value as JSON, null when it has none, or "result_error") follows
// the cell, and then the bridge is closed.
int RunSessionLoop(JsEngine& engine, int control_fd, BridgeClient* bridge = nullptr);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_JS_SESSION_H_
