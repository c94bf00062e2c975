// Turning JavaScript exceptions into plain {name, message, stack} records.
//
// Used for the bridge's result_error frame and for the "Uncaught ..." line on
// stderr. Describing an error may run user code (a `name` getter, toString);
// anything that throws while describing is swallowed and replaced by a
// fallback, so describing never fails.
#ifndef AIRLOCK_ENGINE_JS_JS_ERRORS_H_
#define AIRLOCK_ENGINE_JS_JS_ERRORS_H_

#include <jsapi.h>

#include <optional>
#include <string>

namespace airlock::engine::js {

struct ErrorInfo {
  std::string name{};     // "TypeError", "ToolError", "E_LIMIT_WALLCLOCK", ...
  std::string message{};
  std::string stack{};    // SpiderMonkey format: "fn@main.js:3:5\n" per frame; may be empty
  std::string code{};     // a string `code` property (ToolError's "E_..."), else empty
};

// Describes a thrown value. `stack` (a SavedFrame, may be null) is used when
// the value is not an Error object carrying its own stack.
ErrorInfo DescribeError(JSContext* cx, JS::HandleValue exn, JS::HandleObject stack);

// Takes the pending exception off the context and describes it. nullopt when
// nothing is pending, i.e. execution was stopped uncatchably (interrupt,
// out of memory reported without an exception).
std::optional<ErrorInfo> TakePendingError(JSContext* cx);

// Tidies a stack string for reporting: drops frames in `filename` whose line
// is past `last_user_line` (the host's async wrapper around the user's code)
// and keeps at most `max_frames` frames, noting how many were left out.
std::string TidyStack(const std::string& stack, const std::string& filename, unsigned last_user_line,
                      size_t max_frames);

// "Uncaught Name: message\n<stack>" — the text printed to stderr.
std::string FormatUncaught(const ErrorInfo& error);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_JS_ERRORS_H_
