#include "engine/js/js_errors.h"

#include <js/Exception.h>
#include <js/PropertyAndElement.h>
#include <js/Stack.h>

#include "engine/js/js_strings.h"

namespace airlock::engine::js {
namespace {

// obj[key] if it is a string; runs getters; never leaves an exception behind.
std::optional<std::string> StringProperty(JSContext* cx, JS::HandleObject obj, const char* key) {
  JS::RootedValue v(cx);
  if (!JS_GetProperty(cx, obj, key, &v)) {
    JS_ClearPendingException(cx);
    return std::nullopt;
  }
  if (!v.isString()) return std::nullopt;
  JS::RootedString s(cx, v.toString());
  std::string out;
  if (!JsStringToUtf8(cx, s, &out)) {
    JS_ClearPendingException(cx);
    return std::nullopt;
  }
  return out;
}

std::string StackString(JSContext* cx, JS::HandleObject saved_frame) {
  if (!saved_frame) return "";
  JS::RootedString str(cx);
  if (!JS::BuildStackString(cx, nullptr, saved_frame, &str) || !str) {
    JS_ClearPendingException(cx);
    return "";
  }
  std::string out;
  if (!JsStringToUtf8(cx, str, &out)) JS_ClearPendingException(cx);
  return out;
}

}  // namespace

ErrorInfo DescribeError(JSContext* cx, JS::HandleValue exn, JS::HandleObject stack) {
  ErrorInfo info;
  info.name = "Error";
  if (exn.isObject()) {
    JS::RootedObject obj(cx, &exn.toObject());
    if (auto name = StringProperty(cx, obj, "name")) info.name = *name;
    if (auto code = StringProperty(cx, obj, "code")) info.code = *code;
    if (auto message = StringProperty(cx, obj, "message")) {
      info.message = *message;
    } else if (!ValueToUtf8(cx, exn, &info.message)) {
      JS_ClearPendingException(cx);
      info.message = "(unprintable thrown object)";
    }
    JS::RootedObject own_stack(cx, JS::ExceptionStackOrNull(obj));
    info.stack = StackString(cx, own_stack ? own_stack : stack);
    return info;
  }
  if (!ValueToUtf8(cx, exn, &info.message)) {
    JS_ClearPendingException(cx);
    info.message = "(unprintable thrown value)";
  }
  info.stack = StackString(cx, stack);
  return info;
}

std::optional<ErrorInfo> TakePendingError(JSContext* cx) {
  if (!JS_IsExceptionPending(cx)) return std::nullopt;
  JS::ExceptionStack exn_stack(cx);
  if (!JS::StealPendingExceptionStack(cx, &exn_stack)) {
    JS_ClearPendingException(cx);
    return ErrorInfo{"InternalError", "an exception was thrown but could not be retrieved", "", ""};
  }
  return DescribeError(cx, exn_stack.exception(), exn_stack.stack());
}

std::string TidyStack(const std::string& stack, const std::string& filename, unsigned last_user_line,
                      size_t max_frames) {
  std::string out;
  size_t kept = 0, omitted = 0, pos = 0;
  const std::string marker = "@" + filename + ":";
  while (pos < stack.size()) {
    size_t end = stack.find('\n', pos);
    if (end == std::string::npos) end = stack.size();
    std::string_view frame(stack.data() + pos, end - pos);
    pos = end + 1;
    if (frame.empty()) continue;
    // "fn@main.js:LINE:COL": a frame of the wrapper lies past the user's code.
    size_t at = frame.rfind(marker);
    if (at != std::string_view::npos) {
      unsigned line = 0;
      for (size_t i = at + marker.size(); i < frame.size() && frame[i] >= '0' && frame[i] <= '9'; ++i) {
        line = line * 10 + static_cast<unsigned>(frame[i] - '0');
      }
      if (line > last_user_line) continue;
    }
    if (kept == max_frames) {
      ++omitted;
      continue;
    }
    out.append(frame).push_back('\n');
    ++kept;
  }
  if (omitted > 0) out += "... " + std::to_string(omitted) + " more frames\n";
  return out;
}

std::string FormatUncaught(const ErrorInfo& error) {
  std::string out = "Uncaught " + error.name;
  if (!error.message.empty()) out += ": " + error.message;
  out += "\n";
  out += error.stack;
  if (!out.empty() && out.back() != '\n') out += "\n";
  return out;
}

}  // namespace airlock::engine::js
