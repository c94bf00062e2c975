// The `tools` global of a code-mode program: the program side of the bridge
// protocol (/tmp/bridge.md, docs: code mode), speaking length-prefixed JSON
// frames on one pre-opened file descriptor.
//
// In the program:
//   await tools.search(query, limit?)   -> {tools: [...], truncated}
//   await tools.describe(name)          -> {name, description, input_schema, signature, read_only}
//   await tools.call(name, args?)       -> the tool's result
// Each returns a Promise; a failed request rejects with a `ToolError`
// (global constructor, so `e instanceof ToolError` works) carrying `.code`
// (E_TOOL_ERROR, E_LIMIT_ARGS, ...) and `.message`. Arguments are checked
// locally first (E_INVALID_ARGS) and a request frame over 2 MiB is refused
// locally (E_LIMIT_ARGS) without being sent.
//
// Tamper resistance: frames are built and parsed in C++ with the engine's own
// JSON implementation, so replacing JSON.stringify, Promise.prototype.then or
// Object.prototype members cannot forge a frame. (Like JSON.stringify, the
// serializer honours toJSON methods, so an Object.prototype.toJSON that
// returns a non-object makes args a non-object: the call is then refused
// locally with E_INVALID_ARGS, nothing is sent.) `tools` and its
// methods are frozen, read-only and permanent; all state (ids, pending
// promises, the fd) lives in C++ and is not reachable from script. Nothing
// the program prints reaches the bridge fd.
//
// Lifetime: create after the engine, destroy before it (it holds GC roots).
//
//   auto bridge = BridgeClient::Install(*engine, /*fd=*/3);
//   engine->RunUntilSettled(promise, [&](auto deadline) { return (*bridge)->Wait(deadline); });
//   (*bridge)->SendResult(json);
#ifndef AIRLOCK_ENGINE_JS_BRIDGE_CLIENT_H_
#define AIRLOCK_ENGINE_JS_BRIDGE_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"
#include "engine/js/js_engine.h"
#include "engine/js/js_errors.h"

namespace airlock::engine::js {

inline constexpr size_t kBridgeMaxFrameBytes = size_t{2} << 20;  // 2 MiB

class BridgeClient {
 public:
  // Defines `tools` and `ToolError` on the engine's global; takes `fd`.
  static StatusOr<std::unique_ptr<BridgeClient>> Install(JsEngine& engine, UniqueFd fd);
  ~BridgeClient();
  BridgeClient(const BridgeClient&) = delete;
  BridgeClient& operator=(const BridgeClient&) = delete;

  // The engine's wait hook: blocks (up to `deadline`) for one reply frame and
  // settles its promise. kNothingPending when no request is outstanding;
  // kFailed (see failure()) when the channel broke or a frame was invalid.
  JsEngine::WaitResult Wait(std::optional<Clock::time_point> deadline);

  size_t pending() const { return pending_.size(); }
  // Why the bridge failed (E_BRIDGE_PROTOCOL); OK while it works.
  const Status& failure() const { return failure_; }

  // Sessions (a code-mode session: one bridge per cell). Rebind makes `fd`
  // the bridge of the cell that runs now; Unbind ends it (the descriptor is
  // closed, requests fail with E_BRIDGE_PROTOCOL and `why` until the next
  // Rebind). Either way, requests still pending from before are rejected
  // with E_BRIDGE_PROTOCOL.
  void Rebind(UniqueFd fd);
  void Unbind(const std::string& why);

  // The end-of-run frames. `value_json` must be one JSON value.
  Status SendResult(const std::string& value_json);
  Status SendResultError(const ErrorInfo& error);

 private:
  BridgeClient(JsEngine& engine, UniqueFd fd) : engine_(engine), fd_(std::move(fd)) {}
  Status Init();

  // tools.* implementations; all return a Promise in args.rval().
  bool Search(JSContext* cx, JS::CallArgs& args);
  bool Describe(JSContext* cx, JS::CallArgs& args);
  bool Call(JSContext* cx, JS::CallArgs& args);

  // Sends `{"id":N,<fields>}` and parks `promise` under N; or rejects it.
  bool SendRequest(JSContext* cx, JS::HandleObject promise, const std::string& fields);
  // Rejects `promise` with a new ToolError(code, message).
  bool RejectWithToolError(JSContext* cx, JS::HandleObject promise, const std::string& code,
                           const std::string& message);
  // Applies one reply frame.
  Status HandleReply(const std::string& payload);
  // Rejects every pending request with E_BRIDGE_PROTOCOL: `why`.
  void RejectPending(const std::string& why);

  JsEngine& engine_;
  UniqueFd fd_;
  int64_t next_id_ = 1;
  std::map<int64_t, std::unique_ptr<JS::PersistentRootedObject>> pending_;
  std::unique_ptr<JS::PersistentRootedObject> tool_error_ctor_;
  Status failure_;
};

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_BRIDGE_CLIENT_H_
