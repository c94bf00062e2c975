// `airlock-js --wasi-session MODULE ... --control-fd N [--restore] -- python
// [options] -c HARNESS`: the WASM tier's Python session, driven from the
// host so that it can be paused, resumed and forked.
//
// MODULE is python-session.wasm, CPython linked as a WASI reactor
// (scripts/wasm/python/airlock_session.c): `_initialize`, then
// `airlock_session_init` (starts the interpreter with the WASI argv and
// runs HARNESS, which binds `_airlock_turn`), then one
// `airlock_session_turn` per turn, each reading its turn from the control
// descriptor and answering there (runtimes/session_harness.h). Between two
// exports no WebAssembly frame is live, so the guest is its linear memory
// and the host's WASI state, and both can be saved:
//
//   supervisor -> here  "!snapshot <nonce>\n"   with an empty file's
//                       descriptor attached to its first byte (SCM_RIGHTS):
//                       the guest's memory, its __stack_pointer and the WASI
//                       state (descriptors, writable files) are written to
//                       it (wasm/session_image.h, within the engine's
//                       RLIMIT_FSIZE); the end markers and "<nonce> ok 0\n"
//                       follow (error 1 and a message on stderr if it could
//                       not be written).
//   supervisor -> here  "!restore <nonce>\n"    (--restore: the first
//                       message) with the image's descriptor attached: it is
//                       checked against this module, standard library and
//                       cap and loaded into a fresh instance in place of
//                       `airlock_session_init`; the guest's files are
//                       written to the work dir; then the markers and the
//                       reply as above.
//
// The image never passes through the jail's /work, its init or a copy in
// the supervisor's memory: the runner opens the file in its private
// directory and lends the engine that one descriptor for the one turn.
//
// A normal turn's header starts with its nonce (hex), never '!': the driver
// peeks at the first byte to tell the two apart and leaves a turn to the
// guest. EOF on the control descriptor ends the session (exit 0).
#ifndef AIRLOCK_ENGINE_JS_PYTHON_SESSION_H_
#define AIRLOCK_ENGINE_JS_PYTHON_SESSION_H_

#include "engine/js/wasi_runner.h"

namespace airlock::engine::js {

// argv[1] is "--wasi-session"; the rest as WasiMain's (--control-fd required).
int PythonSessionMain(int argc, char** argv, const EngineOptions& base);

// The driver itself (for WasiMainWith).
WasmOutcome RunPythonSession(WasiGuest& guest);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_PYTHON_SESSION_H_
