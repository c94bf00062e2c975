// JSON conversion with the engine's own serializer and parser.
//
// These call SpiderMonkey's C++ JSON implementation directly, never the
// script-visible `JSON` object, so a program that replaces JSON.stringify or
// JSON.parse cannot change what the host sends or receives. (A value's own
// toJSON methods still run: they are part of the value, as in JSON.stringify.)
#ifndef AIRLOCK_ENGINE_JS_JS_JSON_H_
#define AIRLOCK_ENGINE_JS_JS_JSON_H_

#include <jsapi.h>

#include <optional>
#include <string>
#include <string_view>

namespace airlock::engine::js {

// JSON.stringify(value) as UTF-8 into *out; *out is nullopt where
// JSON.stringify would return undefined (undefined, functions, symbols).
// False if serialisation threw (cycle, BigInt, a throwing toJSON): the
// exception is left pending — or none is pending if execution was stopped
// (deadline, out of memory).
bool ToJson(JSContext* cx, JS::HandleValue value, std::optional<std::string>* out);

// JSON.parse(utf8). False with a SyntaxError pending if it is not JSON.
bool ParseJson(JSContext* cx, std::string_view utf8, JS::MutableHandleValue out);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_JS_JSON_H_
