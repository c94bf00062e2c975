// The stable error codes a code-mode program sees (research codemode.md §6),
// in bridge replies ({"id":N,"ok":false,"error":{"code","message"}}) and as
// the `name` of a run's error. The gateway's own codes (E_TOOL_ERROR,
// E_TOOL_NOT_DECLARED, E_INVALID_ARGS, E_CANCELLED) live in gateway/gateway.h.
#ifndef AIRLOCK_CODEMODE_ERROR_CODES_H_
#define AIRLOCK_CODEMODE_ERROR_CODES_H_

namespace airlock::codemode {

inline constexpr char kErrBridgeProtocol[] = "E_BRIDGE_PROTOCOL";      // malformed frame
inline constexpr char kErrWriteNotAllowed[] = "E_WRITE_NOT_ALLOWED";   // write tool, no write grant
inline constexpr char kErrLimitCalls[] = "E_LIMIT_CALLS";              // Limits::max_calls used up
inline constexpr char kErrLimitArgs[] = "E_LIMIT_ARGS";                // one call's args too large
inline constexpr char kErrLimitResult[] = "E_LIMIT_RESULT";            // a tool result / return value too large
inline constexpr char kErrLimitWallclock[] = "E_LIMIT_WALLCLOCK";      // Limits::wall_ms used up
inline constexpr char kErrLimitConsole[] = "E_LIMIT_CONSOLE";          // console output too large
inline constexpr char kErrLimitMemory[] = "E_LIMIT_MEMORY";            // memory limit hit

}  // namespace airlock::codemode

#endif  // AIRLOCK_CODEMODE_ERROR_CODES_H_
