#include "engine/js/js_strings.h"

#include <js/CharacterEncoding.h>
#include <js/Conversions.h>
#include <js/String.h>
#include <js/Symbol.h>
#include <mozilla/Range.h>

namespace airlock::engine::js {

void AppendUtf16AsUtf8(std::u16string_view units, std::string* out) {
  out->reserve(out->size() + units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    char32_t c = units[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < units.size() && units[i + 1] >= 0xDC00 &&
        units[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (units[i + 1] - 0xDC00);
      ++i;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;  // lone surrogate
    }
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (c >> 6)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (c >> 12)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (c >> 18)));
      out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
}

bool JsStringToUtf8(JSContext* cx, JS::HandleString str, std::string* out) {
  out->clear();
  std::u16string units(JS_GetStringLength(str), u'\0');
  if (!JS_CopyStringChars(cx, mozilla::Range<char16_t>(units.data(), units.size()), str)) {
    return false;
  }
  AppendUtf16AsUtf8(units, out);
  return true;
}

JSString* NewJsString(JSContext* cx, std::string_view utf8) {
  return JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(utf8.data(), utf8.size()));
}

bool ValueToUtf8(JSContext* cx, JS::HandleValue value, std::string* out) {
  JS::RootedString str(cx);
  if (value.isSymbol()) {
    JS::RootedSymbol sym(cx, value.toSymbol());
    JS::RootedString desc(cx, JS::GetSymbolDescription(sym));
    std::string d;
    if (desc && !JsStringToUtf8(cx, desc, &d)) return false;
    *out = "Symbol(" + d + ")";
    return true;
  }
  str = JS::ToString(cx, value);
  if (!str) return false;
  return JsStringToUtf8(cx, str, out);
}

}  // namespace airlock::engine::js
