// Reading and writing the bridge's frames (the protocol is in
// runtimes/bridge.h): turns one untrusted frame into a checked JSON object,
// and builds the reply frames. Never throws.
//
//   ParsedFrame f = ParseFrame(text);
//   if (!f.problem.empty()) { if (!f.id.is_null()) reply(ErrorReply(f.id, kErrBridgeProtocol, f.problem)); }
#ifndef AIRLOCK_CODEMODE_BRIDGE_FRAMES_H_
#define AIRLOCK_CODEMODE_BRIDGE_FRAMES_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace airlock::codemode {

// Deeper values are refused: nlohmann's dump() recurses once per level.
inline constexpr int kMaxFrameDepth = 64;

struct ParsedFrame {
  nlohmann::json frame;  // the object (when problem is empty)
  nlohmann::json id;     // the integer id if one could be read (even from a bad frame), else null
  std::string op;        // "search" | "describe" | "call" | "result" | "result_error" (when problem is empty)
  std::string problem;   // why the frame is malformed; empty if it is fine
};

// Checks UTF-8, JSON syntax, nesting depth, that it is an object with a
// known "op" string, and that requests carry an integer "id".
ParsedFrame ParseFrame(std::string_view text);

// Serializes without throwing (invalid UTF-8 is replaced, which cannot occur
// in values parsed by ParseFrame).
std::string Dump(const nlohmann::json& j);

// {"id":N,"ok":false,"error":{"code","message"}}
nlohmann::json ErrorReply(const nlohmann::json& id, const std::string& code, const std::string& message);
// {"id":N,"ok":true,"result":V}
nlohmann::json OkReply(const nlohmann::json& id, nlohmann::json result);

// The program's error in the run's shape: {"name","message","stack"?,"code"?}, all
// strings (a non-object becomes {"name":"Error","message":<its JSON>}).
nlohmann::json NormalizeProgramError(const nlohmann::json& error);

// `s` cut to `max_bytes` on a UTF-8 boundary.
std::string Truncated(std::string_view s, size_t max_bytes);

}  // namespace airlock::codemode

#endif  // AIRLOCK_CODEMODE_BRIDGE_FRAMES_H_
