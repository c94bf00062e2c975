#include "engine/js/js_session.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <js/CompilationAndEvaluation.h>
#include <js/Exception.h>
#include <js/Promise.h>
#include <js/SourceText.h>
#include <jsapi.h>

#include "engine/js/js_console.h"
#include "engine/js/js_errors.h"
#include "engine/js/write_all.h"

namespace airlock::engine::js {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitOutOfMemory = 3;
constexpr size_t kMaxCellBytes = 64u << 20;

// The control channel's bytes, read as they are needed.
class ControlReader {
 public:
  explicit ControlReader(int fd) : fd_(fd) {}

  // The next line without its '\n'; nullopt at the end of the stream.
  std::optional<std::string> Line() {
    size_t nl;
    while ((nl = buf_.find('\n')) == std::string::npos) {
      if (buf_.size() > 4096 || !Fill()) return std::nullopt;
    }
    std::string line = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    return line;
  }

  // Exactly `n` bytes; nullopt if the stream ends first.
  std::optional<std::string> Bytes(size_t n) {
    while (buf_.size() < n) {
      if (!Fill()) return std::nullopt;
    }
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }

 private:
  bool Fill() {
    char chunk[65536];
    ssize_t n;
    do {
      n = ::read(fd_, chunk, sizeof chunk);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    buf_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  std::string buf_;
};

// Prints `value` as console.log would.
void Show(JSContext* cx, JS::HandleObject global, JS::HandleValue value) {
  JS::RootedValue console(cx);
  if (!JS_GetProperty(cx, global, "console", &console) || !console.isObject()) {
    JS_ClearPendingException(cx);
    return;
  }
  JS::RootedObject obj(cx, &console.toObject());
  JS::RootedValueArray<1> args(cx);
  args[0].set(value);
  JS::RootedValue ignored(cx);
  if (!JS_CallFunctionName(cx, obj, "log", args, &ignored)) JS_ClearPendingException(cx);
}

// A cell that does not parse as a script but would as an async body.
bool WantsAsyncBody(JSContext* cx, std::string_view code) {
  if (code.find("await") == std::string_view::npos || !JS_IsExceptionPending(cx)) return false;
  JS::RootedValue exn(cx);
  if (!JS_GetPendingException(cx, &exn) || !exn.isObject()) return false;
  const mozilla::Maybe<JSExnType> type = JS_GetErrorType(exn);
  return type.isSome() && *type == JSEXN_SYNTAXERR;
}

enum class CellEnd { kOk, kError, kStopped };

// Runs one cell; prints its value or its uncaught exception.
CellEnd RunCell(JsEngine& engine, const std::string& code, const std::string& name) {
  JSContext* cx = engine.cx();
  auto uncaught = [&]() {
    if (engine.stop_reason() != StopReason::kNone) return CellEnd::kStopped;
    std::optional<ErrorInfo> error = TakePendingError(cx);
    if (!error) return engine.stop_reason() != StopReason::kNone ? CellEnd::kStopped : CellEnd::kError;
    WriteAll(2, FormatUncaught(*error));
    return CellEnd::kError;
  };
  JS::CompileOptions opts(cx);
  opts.setFileAndLine(name.c_str(), 1);
  JS::SourceText<mozilla::Utf8Unit> src;
  if (!src.init(cx, code.data(), code.size(), JS::SourceOwnership::Borrowed)) return uncaught();
  JS::RootedScript script(cx, JS::Compile(cx, opts, src));
  JS::RootedValue value(cx);
  if (script) {
    if (!JS_ExecuteScript(cx, script, &value)) return uncaught();
    // The value first, then the promise jobs the cell queued (as a REPL).
    if (!value.isUndefined()) Show(cx, engine.global(), value);
    engine.RunJobs();
    return engine.stop_reason() != StopReason::kNone ? CellEnd::kStopped : CellEnd::kOk;
  } else {
    if (!WantsAsyncBody(cx, code)) return uncaught();
    JS_ClearPendingException(cx);
    JS::RootedObject promise(cx);
    if (!engine.StartAsyncBody(code, name.c_str(), &promise)) return uncaught();
    switch (engine.RunUntilSettled(promise, {})) {
      case JsEngine::LoopResult::kSettled:
        break;
      case JsEngine::LoopResult::kNeverSettled:
        WriteAll(2, "Uncaught Error: the cell awaits a promise that nothing can settle\n");
        return CellEnd::kError;
      default:
        return CellEnd::kStopped;
    }
    value.set(JS::GetPromiseResult(promise));
    if (JS::GetPromiseState(promise) == JS::PromiseState::Rejected) {
      JS::RootedObject site(cx, JS::GetPromiseResolutionSite(promise));
      WriteAll(2, FormatUncaught(DescribeError(cx, value, site)));
      return CellEnd::kError;
    }
  }
  if (!value.isUndefined()) Show(cx, engine.global(), value);
  return engine.stop_reason() != StopReason::kNone ? CellEnd::kStopped : CellEnd::kOk;
}

}  // namespace

int RunSessionLoop(JsEngine& engine, int control_fd) {
  ControlReader in(control_fd);
  for (unsigned cell = 1;; ++cell) {
    std::optional<std::string> header = in.Line();
    if (!header) return 0;  // the supervisor closed the channel
    // "<nonce> <code bytes> <stdin bytes>"
    const size_t a = header->find(' ');
    const size_t b = a == std::string::npos ? a : header->find(' ', a + 1);
    if (b == std::string::npos) return kExitUsage;
    const std::string nonce = header->substr(0, a);
    const unsigned long long code_len = std::strtoull(header->c_str() + a + 1, nullptr, 10);
    const unsigned long long stdin_len = std::strtoull(header->c_str() + b + 1, nullptr, 10);
    if (code_len > kMaxCellBytes || stdin_len > kMaxCellBytes) return kExitUsage;
    std::optional<std::string> code = in.Bytes(code_len);
    if (!code || !in.Bytes(stdin_len)) return kExitUsage;  // this tier has no stdin
    const CellEnd end = RunCell(engine, *code, "<cell " + std::to_string(cell) + ">");
    if (end == CellEnd::kStopped) {
      WriteAll(2, engine.stop_reason() == StopReason::kOutOfMemory
                      ? "airlock-js: E_LIMIT_MEMORY: out of memory: the JavaScript heap limit was reached\n"
                      : "airlock-js: execution was terminated\n");
      return kExitOutOfMemory;
    }
    // The marker src/runtimes/session_harness.cc's TurnEndMarker makes.
    const std::string marker = "\x1e" "airlock-turn-end:" + nonce + "\x1e";
    WriteAll(1, marker);
    WriteAll(2, marker);
    WriteAll(control_fd, nonce + (end == CellEnd::kOk ? " ok 0\n" : " error 1\n"));
  }
}

int SessionMain(int argc, char** argv) {
  int control_fd = -1;
  uint64_t heap_mb = 256;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    char* end = nullptr;
    const unsigned long long n = std::strtoull(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0') {
      WriteAll(2, "airlock-js: bad value for " + std::string(flag) + "\n");
      return kExitUsage;
    }
    if (flag == "--control-fd" && n >= 3 && n < 1024) {
      control_fd = static_cast<int>(n);
    } else if (flag == "--heap-mb" && n >= 8 && n <= 4095) {
      heap_mb = n;
    } else {
      WriteAll(2, "airlock-js: unknown flag or bad value: " + std::string(flag) + "\n");
      return kExitUsage;
    }
  }
  if (control_fd < 0 || argc % 2 != 0) {
    WriteAll(2, "usage: airlock-js --session --control-fd N [--heap-mb N]\n");
    return kExitUsage;
  }
  EngineOptions options;
  options.heap_bytes = heap_mb << 20;
  StatusOr<std::unique_ptr<JsEngine>> engine = JsEngine::Create(options);
  if (!engine.ok()) {
    WriteAll(2, "airlock-js: cannot start the engine: " + engine.status().ToString() + "\n");
    return 1;
  }
  if (Status st = InstallConsole(**engine, {}); !st.ok()) {
    WriteAll(2, "airlock-js: " + st.ToString() + "\n");
    return 1;
  }
  const int code = RunSessionLoop(**engine, control_fd);
  engine->reset();
  return code;
}

}  // namespace airlock::engine::js
