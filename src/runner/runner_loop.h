// The runner process's main loop: the only place airlock runs user code on
// behalf of the MCP server.
//
// `airlock serve` never runs code itself. It spawns `airlock runner
// --channel-fd N` (see runner_client.h) and talks to it over a private
// AF_UNIX stream socket with length-prefixed JSON frames (frame.h). The
// runner owns the jails through a CodeExecutor and handles runs concurrently
// on a pool of persistent worker threads (worker_pool.h): a run takes an
// idle worker, and a new thread is started only when none is idle.
//
// Protocol (every message is a JSON object with "type"):
//   server -> runner
//     {"type":"run","id":N,"request":{RunRequest}}
//     {"type":"cancel","id":N}
//     {"type":"languages","id":N}
//     {"type":"ping","id":N}
//     {"type":"bridge_reply","id":N,"frame":"<JSON text>"}  (code mode)
//     {"type":"session_open","id":N,"session":{SessionSpec}}  (sessions)
//     {"type":"session_close","id":N,"session_id":"s_..."}
//     {"type":"session_pause","id":N,"session_id":"s_..."}   (checkpoints)
//     {"type":"session_resume","id":N,"session_id":"s_..."}
//     {"type":"session_fork","id":N,"session_id":"s_...","session":{SessionSpec of the copy}}
//     {"type":"session_export","id":N,"session_id":"s_...","offset":O}   (moving a session:
//                                       CodeExecutor::ExportSession)
//     {"type":"session_import","id":N,"session":{SessionSpec},"offset":O,"data":"<base64>","last":B}
//   runner -> server
//     {"type":"hello","pid":P,"version":"0.1.0"}        (first frame, once)
//     {"type":"fatal","message":"..."}  (instead of hello: this host cannot run
//                                        code, and why; the runner then exits)
//     {"type":"progress","id":N,"phase":"compiling"}   (queued, starting,
//                                        compiling, running; never "done":
//                                        the result frame is the end)
//     {"type":"result","id":N,"result":{RunResult}}
//     {"type":"languages","id":N,"languages":[{LanguageInfo}...]}
//     {"type":"pong","id":N}
//     {"type":"bridge","id":N,"frame":"<JSON text>"}        (code mode)
//     {"type":"bridge_error","id":N,"message":"..."}
//     {"type":"bridge_socket","id":N}  (code mode with pass_bridge_sockets:
//                                       the run's bridge socket rides along
//                                       as SCM_RIGHTS; the server reads and
//                                       answers its frames, none are relayed)
//     {"type":"session","id":N,"ok":true|false,"code"?:"NOT_FOUND","message"?:"..."}
//                                       (the answer to every session_* frame; a
//                                       session_export's carries "chunk":
//                                       {"session"?:{SessionSpec},"data":"<base64>","size":S})
// A "run" whose request has a session_id runs a cell in that session.
// A code-mode run (request.code_mode) relays its program's bridge frames
// (runtimes/bridge.h) to the server verbatim, as strings, and writes each
// bridge_reply back to the program; the runner never interprets them: the
// server validates and answers every frame.
// Every "run" gets exactly one "result" (a malformed request, a duplicate id
// or a full runner get an internal_error result with error_code
// "invalid_request" or "busy"). "cancel" of an unknown id is ignored.
//
// When the channel reaches EOF (the server died or stopped us) the loop
// cancels every run, waits for all of them, and returns 0: nothing is left
// running. A corrupt stream (oversized frame, read error) ends it the same
// way but returns 1.
#ifndef AIRLOCK_RUNNER_RUNNER_LOOP_H_
#define AIRLOCK_RUNNER_RUNNER_LOOP_H_

#include <cstddef>
#include <string>

#include "base/frame.h"
#include "runtimes/code_executor.h"

namespace airlock::runner {

struct RunnerOptions {
  // Hard cap on runs executing at once; the server keeps its own (lower)
  // limit, this guards against a confused peer. Over it: "busy" results.
  size_t max_concurrent_runs = 64;
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  // Hand each code-mode program's bridge socket to the server
  // ("bridge_socket", the descriptor attached) instead of relaying its
  // frames: only where the channel is an AF_UNIX socket to an airlock
  // server that takes descriptors (`airlock runner`, spawned by `airlock
  // serve`). A runner host's channel (gRPC) cannot carry them.
  bool pass_bridge_sockets = false;
  std::string version = AIRLOCK_VERSION;
};

// Serves the protocol on `channel_fd` (not owned; marked CLOEXEC here so no
// jail inherits it) until EOF. Returns the process exit code (1 if the fd is
// unusable). Never throws.
//
// The CLI's `airlock runner --channel-fd N` builds the real executor and
// returns RunnerMain(N, executor, {}) from main(). Note the runner gets
// PR_SET_PDEATHSIG(SIGKILL): if the server dies abruptly the runner dies
// too, so jails must not rely on the runner's graceful shutdown alone.
int RunnerMain(int channel_fd, runtimes::CodeExecutor& executor, const RunnerOptions& options);

}  // namespace airlock::runner

#endif  // AIRLOCK_RUNNER_RUNNER_LOOP_H_
