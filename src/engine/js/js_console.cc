#include "engine/js/js_console.h"

#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include <js/CallAndConstruct.h>
#include <js/Exception.h>
#include <js/PropertyAndElement.h>

#include "engine/js/js_errors.h"
#include "engine/js/js_json.h"
#include "engine/js/js_strings.h"
#include "engine/js/write_all.h"

namespace airlock::engine::js {
namespace {

struct ConsoleState {
  ConsoleOptions options;
  uint64_t written = 0;
  bool truncated = false;

  void Emit(int fd, std::string line) {
    if (truncated) return;
    if (options.max_bytes != 0 && written + line.size() > options.max_bytes) {
      line.resize(options.max_bytes - written);
      if (!line.empty()) line.push_back('\n');
      line += kConsoleTruncatedMarker;
      truncated = true;
    }
    written += line.size();
    (void)WriteAll(fd, line);  // nowhere to write: drop it
  }
};

// Formats one argument. False only when execution must stop (no exception
// pending): an exception thrown by user code while formatting is swallowed.
bool FormatValue(JSContext* cx, JS::HandleValue v, std::string* out) {
  if (v.isString()) {
    JS::RootedString s(cx, v.toString());
    return JsStringToUtf8(cx, s, out);
  }
  if (v.isObject()) {
    JS::RootedObject obj(cx, &v.toObject());
    if (JS_ErrorFromException(cx, obj) != nullptr) {
      ErrorInfo info = DescribeError(cx, v, nullptr);
      *out = info.name + (info.message.empty() ? "" : ": " + info.message);
      if (!info.stack.empty()) *out += "\n" + info.stack;
      while (!out->empty() && out->back() == '\n') out->pop_back();
      return true;
    }
    if (!JS::IsCallable(obj)) {
      std::optional<std::string> json;
      if (ToJson(cx, v, &json)) {
        if (json) {
          *out = *json;
          return true;
        }
      } else if (!JS_IsExceptionPending(cx)) {
        return false;
      }
      JS_ClearPendingException(cx);
    }
  }
  if (ValueToUtf8(cx, v, out)) return true;
  if (!JS_IsExceptionPending(cx)) return false;
  JS_ClearPendingException(cx);
  *out = "[unprintable value]";
  return true;
}

}  // namespace

Status InstallConsole(JsEngine& engine, const ConsoleOptions& options) {
  JSContext* cx = engine.cx();
  auto state = std::make_shared<ConsoleState>();
  state->options = options;
  JS::RootedObject console(cx, JS_NewPlainObject(cx));
  if (!console) return Internal("console: out of memory");
  struct Method {
    const char* name;
    int fd;
  };
  const Method methods[] = {{"log", options.stdout_fd},   {"info", options.stdout_fd},
                            {"debug", options.stdout_fd}, {"warn", options.stderr_fd},
                            {"error", options.stderr_fd}};
  for (const Method& m : methods) {
    int fd = m.fd;
    bool ok = engine.DefineHostFunction(console, m.name, 0, [state, fd](JSContext* cx, JS::CallArgs& args) {
      std::string line;
      for (unsigned i = 0; i < args.length(); ++i) {
        std::string piece;
        if (!FormatValue(cx, args[i], &piece)) return false;
        if (i > 0) line.push_back(' ');
        line += piece;
      }
      line.push_back('\n');
      state->Emit(fd, std::move(line));
      args.rval().setUndefined();
      return true;
    }, JSPROP_ENUMERATE);
    if (!ok) return Internal(std::string("console: cannot define ") + m.name);
  }
  JS::RootedValue value(cx, JS::ObjectValue(*console));
  if (!JS_DefineProperty(cx, engine.global(), "console", value, 0)) {
    return Internal("console: cannot define the global");
  }
  return OkStatus();
}

}  // namespace airlock::engine::js
