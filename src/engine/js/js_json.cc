#include "engine/js/js_json.h"

#include <js/CallAndConstruct.h>
#include <js/JSON.h>

#include "engine/js/js_strings.h"

namespace airlock::engine::js {
namespace {

bool AppendChunk(const char16_t* buf, uint32_t len, void* data) {
  static_cast<std::u16string*>(data)->append(buf, len);
  return true;
}

}  // namespace

bool ToJson(JSContext* cx, JS::HandleValue value, std::optional<std::string>* out) {
  out->reset();
  std::u16string units;
  bool called = false;
  struct Sink {
    std::u16string* units;
    bool* called;
  } sink{&units, &called};
  JS::RootedValue v(cx, value);
  bool ok = JS_Stringify(
      cx, &v, nullptr, JS::UndefinedHandleValue,
      [](const char16_t* buf, uint32_t len, void* data) {
        auto* s = static_cast<Sink*>(data);
        *s->called = true;
        return AppendChunk(buf, len, s->units);
      },
      &sink);
  if (!ok) return false;
  // JS_Stringify writes "null" where JSON.stringify returns undefined; tell
  // the cases apart for the root value. (An object whose toJSON returns
  // undefined still comes out as "null".)
  if (!called) return true;
  if (value.isUndefined() || value.isSymbol() ||
      (value.isObject() && JS::IsCallable(&value.toObject()) && units == u"null")) {
    return true;
  }
  std::string utf8;
  AppendUtf16AsUtf8(units, &utf8);
  *out = std::move(utf8);
  return true;
}

bool ParseJson(JSContext* cx, std::string_view utf8, JS::MutableHandleValue out) {
  JS::RootedString str(cx, NewJsString(cx, utf8));
  if (!str) return false;
  return JS_ParseJSON(cx, str, out);
}

}  // namespace airlock::engine::js
