// Building the script that runs a program as the body of an async function.
//
// See js_engine.h for the rule. BuildAsyncBodySource returns
//
//   (async function () {<code>
//   })()
//
// with the last top-level expression statement of `code` (if the last
// statement is one) rewritten to `return (<expr>\n);`, so its value becomes
// the program's value. Finding it uses SpiderMonkey's own parser
// (Reflect.parse) inside a private global that is thrown away afterwards; the
// program's global never sees Reflect.parse. If `code` does not parse, or the
// rewrite would not compile, the plain wrapper is returned and compiling it
// reports the user's SyntaxError.
#ifndef AIRLOCK_ENGINE_JS_ASYNC_BODY_H_
#define AIRLOCK_ENGINE_JS_ASYNC_BODY_H_

#include <jsapi.h>

#include <string>
#include <string_view>

namespace airlock::engine::js {

// The source prefix and suffix of the wrapper (the prefix has no newline, so
// line numbers inside the body equal the user's).
inline constexpr std::string_view kAsyncBodyPrefix = "(async function () {";
inline constexpr std::string_view kAsyncBodySuffix = "\n})()";

// Never fails; leaves no exception pending.
std::string BuildAsyncBodySource(JSContext* cx, std::string_view code);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_ASYNC_BODY_H_
