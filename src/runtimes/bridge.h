// The code-mode bridge as the executor sees it: a stream of frames from the
// program (fd 3 inside the jail) and the replies that go back.
//
// A code-mode run (RunRequest::code_mode) gives the program one extra file
// descriptor, fd 3, carrying length-prefixed frames (4-byte big-endian length,
// then UTF-8 JSON, at most kBridgeMaxFrameBytes). The executor does not look
// inside the frames: it hands each one, as text, to the run's BridgeHandler,
// and writes whatever the handler replies back to the program. In the MCP
// server the handler is a codemode::BridgeSession, which validates every
// frame; between the runner process and the server the frames travel on the
// runner channel (runner_loop.h).
//
// Frames, program -> airlock:
//   {"id":N,"op":"search","query":"...","limit":10}
//   {"id":N,"op":"describe","name":"conn.tool"}
//   {"id":N,"op":"call","name":"conn.tool","args":{...}}
//   {"op":"result","value":<JSON>}                      (last frame, once)
//   {"op":"result_error","error":{"name","message","stack","code"?}}
//                                     (code: an uncaught ToolError's E_... code)
// airlock -> program:
//   {"id":N,"ok":true,"result":<JSON>}
//   {"id":N,"ok":false,"error":{"code":"E_...","message":"..."}}
#ifndef AIRLOCK_RUNTIMES_BRIDGE_H_
#define AIRLOCK_RUNTIMES_BRIDGE_H_

#include <cstddef>
#include <functional>
#include <string>

#include "base/unique_fd.h"

namespace airlock::runtimes {

inline constexpr size_t kBridgeMaxFrameBytes = size_t{2} << 20;  // 2 MiB

class BridgeHandler {
 public:
  // Sends one frame (JSON text) to the program. Callable from any thread,
  // any number of times; a no-op once the run has ended.
  using ReplyFn = std::function<void(std::string frame)>;

  virtual ~BridgeHandler() = default;

  // One frame from the program, exactly as it arrived (not yet validated:
  // it may be anything up to kBridgeMaxFrameBytes). Called from one thread
  // at a time, in arrival order; must not block for long (dispatch slow work
  // elsewhere and answer through `reply` later).
  virtual void OnFrame(std::string frame, ReplyFn reply) = 0;

  // The channel broke or carried an oversized frame; the run is ending.
  virtual void OnBridgeError(const std::string& message) { (void)message; }

  // Offered once, before any frame: the executor's end of the program's
  // bridge socket. A handler that takes it (moves it out and returns true)
  // reads and answers the program's frames itself, and the executor relays
  // nothing: the runner process hands the socket to the MCP server so
  // frames skip a hop (runner/runner_loop.h, "bridge_socket"). The
  // default keeps the executor relaying.
  virtual bool TakeSocket(UniqueFd& host_end) {
    (void)host_end;
    return false;
  }
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_BRIDGE_H_
