// The server side of one code-mode run's bridge: every frame the program
// sends (runtimes/bridge.h) is validated here and allowed calls are
// dispatched to the gateway (research codemode.md §6.3, §6.4, §7 G2/G3/G5/G6).
//
//   Grants grants{.connectors = {"crm"}, .write_connectors = {}};
//   BridgeSession session(*gateway, grants, limits, start + std::chrono::milliseconds(limits.wall_ms));
//   RunResult r = executor.Run(request, &session);   // calls session.OnFrame(...) per frame
//   session.Close();                                   // queued calls dropped, in-flight ones cancelled
//   if (auto v = session.return_value()) ...; else if (auto e = session.return_error()) ...;
//   audit.Write(session.calls());
//
// What a request goes through, in order (the first failure is the reply):
//   every request   counted against max_calls             -> E_LIMIT_CALLS
//   search          query string, limit integer           -> E_INVALID_ARGS
//   describe/call   name a string of <= 64 bytes          -> E_INVALID_ARGS
//   call            args an object (missing/null = {})    -> E_INVALID_ARGS
//   call            serialized args <= max_args_bytes     -> E_LIMIT_ARGS
//   describe/call   the tool exists and its connector is granted
//                   (same message either way, so a tool's existence never leaks)
//                                                         -> E_TOOL_NOT_DECLARED
//   call            a write tool's connector is in write_connectors -> E_WRITE_NOT_ALLOWED
//   call            args valid against the input schema   -> E_INVALID_ARGS
//   call            queued FIFO; at most max_concurrent in flight; dispatched
//                   with the time left to `deadline`      -> E_LIMIT_WALLCLOCK
//   call            result value <= max_result_bytes      -> E_LIMIT_RESULT
//   call            the tool's isError / failure          -> E_TOOL_ERROR (gateway's codes)
// Malformed frames (bad JSON or UTF-8, not an object, nested deeper than
// kMaxFrameDepth, unknown op, a request without an integer id) get
// E_BRIDGE_PROTOCOL when an integer id can be read, and are otherwise only
// noted in protocol_error(); they are not requests (not counted or recorded).
//
// Search, describe and the checks run on the OnFrame thread against the
// gateway's cached catalog; tools/call runs on the session's own threads
// (created lazily, at most max_concurrent, joined by Close()). Replies to
// calls come from those threads; none are sent after Close().
#ifndef AIRLOCK_CODEMODE_BRIDGE_SESSION_H_
#define AIRLOCK_CODEMODE_BRIDGE_SESSION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "codemode/call_log.h"
#include "codemode/call_queue.h"
#include "codemode/limits.h"
#include "gateway/gateway.h"
#include "runtimes/bridge.h"

namespace airlock::codemode {

struct Grants {
  std::set<std::string> connectors{};      // the connectors this run may use (declared ∩ allowed); tools of others don't exist for it
  std::set<std::string> write_connectors{};  // connectors whose write tools this run may call (empty for inline programs)
  // Further narrows which tools of those connectors exist for the run (the
  // caller's role patterns, a code tool's declared tools); null: all.
  gateway::ToolFilter tool_filter{};
};

class BridgeSession : public runtimes::BridgeHandler {
 public:
  BridgeSession(gateway::Gateway& gateway, Grants grants, Limits limits,
                std::chrono::steady_clock::time_point deadline);
  ~BridgeSession() override;  // Close()
  BridgeSession(const BridgeSession&) = delete;
  BridgeSession& operator=(const BridgeSession&) = delete;

  void OnFrame(std::string frame, ReplyFn reply) override;
  void OnBridgeError(const std::string& message) override;

  // The run ended (or was cancelled/killed): queued calls are dropped (never
  // dispatched, G-D7), in-flight calls are cancelled downstream and waited
  // for. Idempotent. After Close(), OnFrame ignores frames and no replies are
  // sent. Must not be called from inside a ReplyFn.
  void Close();

  // The program's final frame, if any: {"op":"result","value":V} gives V (a
  // missing value is null); {"op":"result_error","error":E} gives E as
  // {"name","message","stack"?}. A return value whose serialization exceeds
  // max_result_bytes is not kept: return_error() is then
  // {"name":"E_LIMIT_RESULT","message":...}.
  std::optional<nlohmann::json> return_value() const;
  std::optional<nlohmann::json> return_error() const;

  // Every request in arrival order (at most max_calls + CallLog::kExtraRecords
  // are kept; calls_total() and calls_denied() count them all).
  std::vector<CallRecord> calls() const;
  uint32_t calls_total() const;
  uint32_t calls_denied() const;
  // The first malformed-frame or bridge error message, "" if none.
  std::string protocol_error() const;

 private:
  struct Request;  // one request being answered (bridge_session.cc)
  using Clock = std::chrono::steady_clock;
  using json = nlohmann::json;

  void HandleSearch(Request& r, const json& frame);
  void HandleDescribe(Request& r, const json& frame);
  // True if the call passed every check and may be queued; else it is denied.
  bool CheckCall(Request& r, const json& frame);
  void RunCall(Request& r);
  void DropCall(Request& r);
  void HandleFinal(const std::string& op, const json& frame);
  // The program's "name" if it is a string of at most 64 bytes; else denies.
  std::optional<std::string> CheckName(Request& r, const json& frame);
  // The granted tool `name`; else denies with E_TOOL_NOT_DECLARED.
  std::optional<gateway::ToolEntry> Resolve(Request& r, const std::string& name);

  // Completes the request: updates its record and sends `reply` (unless closed).
  void Finish(Request& r, const json& reply);
  void Deny(Request& r, const char* code, const std::string& message, const char* reason);
  void NoteProtocolError(const std::string& message);

  gateway::Gateway& gateway_;
  const Grants grants_;
  const Limits limits_;
  const Clock::time_point deadline_;
  const gateway::ToolFilter visible_;   // connector granted
  const gateway::ToolFilter callable_;  // visible, and read or write-granted (re-checked at dispatch)
  CancelToken cancel_;                  // fired by Close(); shared by every in-flight call

  CallLog log_;

  mutable std::mutex mu_;  // guards the fields below
  bool closed_ = false;
  bool final_seen_ = false;
  std::optional<json> return_value_;
  std::optional<json> return_error_;
  std::string protocol_error_;

  std::mutex close_mu_;  // one Close() at a time
  CallQueue queue_;      // last: its threads use everything above
};

}  // namespace airlock::codemode

#endif  // AIRLOCK_CODEMODE_BRIDGE_SESSION_H_
