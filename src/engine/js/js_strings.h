// Conversions between JavaScript strings/values and UTF-8 std::strings.
//
// JavaScript strings are UTF-16 and may hold lone surrogates; every function
// here produces well-formed UTF-8 (a lone surrogate becomes U+FFFD) and keeps
// embedded NULs. Functions taking a JSContext must run inside a realm.
#ifndef AIRLOCK_ENGINE_JS_JS_STRINGS_H_
#define AIRLOCK_ENGINE_JS_JS_STRINGS_H_

#include <jsapi.h>

#include <string>
#include <string_view>

namespace airlock::engine::js {

// Appends the UTF-8 form of `units` (UTF-16) to `out`.
void AppendUtf16AsUtf8(std::u16string_view units, std::string* out);

// The UTF-8 form of `str`. False (exception pending) only on OOM.
bool JsStringToUtf8(JSContext* cx, JS::HandleString str, std::string* out);

// A new JS string holding `utf8` (invalid sequences are replaced).
JSString* NewJsString(JSContext* cx, std::string_view utf8);

// String(value) as UTF-8, like the ECMAScript ToString operation, except that
// symbols print as their description instead of throwing. May run user code
// (toString); false with an exception pending if that throws.
bool ValueToUtf8(JSContext* cx, JS::HandleValue value, std::string* out);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_JS_STRINGS_H_
