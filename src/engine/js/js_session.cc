#include "engine/js/js_session.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <js/CompilationAndEvaluation.h>
#include <js/Exception.h>
#include <js/Promise.h>
#include <js/SourceText.h>
#include <jsapi.h>

#include "base/fd_passing.h"
#include "engine/js/bridge_client.h"
#include "engine/js/js_console.h"
#include "engine/js/js_errors.h"
#include "engine/js/js_json.h"
#include "engine/js/write_all.h"

namespace airlock::engine::js {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitOutOfMemory = 3;
constexpr size_t kMaxCellBytes = 64u << 20;

// The control channel's bytes, read as they are needed; with `keep_fds`
// (a code-mode session), read with recvmsg, keeping the descriptors that
// come along (a cell's bridge arrives with its turn's first bytes).
class ControlReader {
 public:
  ControlReader(int fd, bool keep_fds) : fd_(fd), keep_fds_(keep_fds) {}

  // The descriptors received so far, handed over.
  std::vector<UniqueFd> TakeFds() { return std::exchange(fds_, {}); }

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
      n = keep_fds_ ? ReceiveWithFds(fd_, chunk, sizeof chunk, &fds_) : ::read(fd_, chunk, sizeof chunk);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    buf_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  bool keep_fds_;
  std::string buf_;
  std::vector<UniqueFd> fds_;
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

// How a cell ended, for a code-mode session's final frame: its value as
// JSON ("null" when it has none) or its error.
struct CellOutcome {
  std::string value_json = "null";
  std::optional<ErrorInfo> error;
};

// The cell's value as JSON, or "null" when it has no JSON form.
std::string ValueJson(JSContext* cx, JS::HandleValue value) {
  std::optional<std::string> json;
  if (!ToJson(cx, value, &json)) {
    JS_ClearPendingException(cx);
    return "null";
  }
  return json ? *json : "null";
}

// Runs one cell; prints its value or its uncaught exception. `bridge` (a
// code-mode session): tool requests are answered while the cell awaits
// them, and a cell whose value is a promise is awaited; `outcome` gets
// what the final frame says.
CellEnd RunCell(JsEngine& engine, const std::string& code, const std::string& name, BridgeClient* bridge,
                CellOutcome* outcome) {
  JSContext* cx = engine.cx();
  JsEngine::WaitHook wait;
  if (bridge != nullptr) {
    wait = [bridge](std::optional<Clock::time_point> deadline) { return bridge->Wait(deadline); };
  }
  auto uncaught = [&]() {
    if (engine.stop_reason() != StopReason::kNone) return CellEnd::kStopped;
    std::optional<ErrorInfo> error = TakePendingError(cx);
    if (!error) return engine.stop_reason() != StopReason::kNone ? CellEnd::kStopped : CellEnd::kError;
    WriteAll(2, FormatUncaught(*error));
    outcome->error = std::move(error);
    return CellEnd::kError;
  };
  // Drives `promise` to its end; its result (or rejection) becomes the cell's.
  auto settle = [&](JS::HandleObject promise, JS::MutableHandleValue value) -> std::optional<CellEnd> {
    switch (engine.RunUntilSettled(promise, wait)) {
      case JsEngine::LoopResult::kSettled:
        break;
      case JsEngine::LoopResult::kWaitFailed:
        WriteAll(2, "Uncaught ToolError: E_BRIDGE_PROTOCOL: " + bridge->failure().message() + "\n");
        outcome->error = ErrorInfo{"E_BRIDGE_PROTOCOL", bridge->failure().message(), ""};
        return CellEnd::kError;
      case JsEngine::LoopResult::kNeverSettled:
        WriteAll(2, "Uncaught Error: the cell awaits a promise that nothing can settle\n");
        outcome->error = ErrorInfo{"E_NEVER_SETTLED", "the cell awaits a promise that nothing can settle", ""};
        return CellEnd::kError;
      default:
        return CellEnd::kStopped;
    }
    value.set(JS::GetPromiseResult(promise));
    if (JS::GetPromiseState(promise) == JS::PromiseState::Rejected) {
      JS::RootedObject site(cx, JS::GetPromiseResolutionSite(promise));
      ErrorInfo error = DescribeError(cx, value, site);
      WriteAll(2, FormatUncaught(error));
      outcome->error = std::move(error);
      return CellEnd::kError;
    }
    return std::nullopt;
  };
  JS::CompileOptions opts(cx);
  opts.setFileAndLine(name.c_str(), 1);
  JS::SourceText<mozilla::Utf8Unit> src;
  if (!src.init(cx, code.data(), code.size(), JS::SourceOwnership::Borrowed)) return uncaught();
  JS::RootedScript script(cx, JS::Compile(cx, opts, src));
  JS::RootedValue value(cx);
  if (script) {
    if (!JS_ExecuteScript(cx, script, &value)) return uncaught();
    JS::RootedObject maybe_promise(cx, value.isObject() ? &value.toObject() : nullptr);
    if (bridge != nullptr && maybe_promise && JS::IsPromiseObject(maybe_promise)) {
      // Code mode: `tools.call(...)` as the last expression is awaited.
      if (std::optional<CellEnd> end = settle(maybe_promise, &value)) return *end;
    }
    // The value first, then the promise jobs the cell queued (as a REPL).
    if (!value.isUndefined()) Show(cx, engine.global(), value);
    if (bridge != nullptr) outcome->value_json = ValueJson(cx, value);
    engine.RunJobs();
    return engine.stop_reason() != StopReason::kNone ? CellEnd::kStopped : CellEnd::kOk;
  } else {
    if (!WantsAsyncBody(cx, code)) return uncaught();
    JS_ClearPendingException(cx);
    JS::RootedObject promise(cx);
    if (!engine.StartAsyncBody(code, name.c_str(), &promise)) return uncaught();
    if (std::optional<CellEnd> end = settle(promise, &value)) return *end;
  }
  if (!value.isUndefined()) Show(cx, engine.global(), value);
  if (bridge != nullptr) outcome->value_json = ValueJson(cx, value);
  return engine.stop_reason() != StopReason::kNone ? CellEnd::kStopped : CellEnd::kOk;
}

}  // namespace

int RunSessionLoop(JsEngine& engine, int control_fd, BridgeClient* bridge) {
  ControlReader in(control_fd, bridge != nullptr);
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
    if (bridge != nullptr) {
      // This cell's bridge came with its turn (the first descriptor; any
      // other is closed here).
      std::vector<UniqueFd> fds = in.TakeFds();
      bridge->Rebind(fds.empty() ? UniqueFd() : std::move(fds[0]));
    }
    CellOutcome outcome;
    const CellEnd end = RunCell(engine, *code, "<cell " + std::to_string(cell) + ">", bridge, &outcome);
    if (bridge != nullptr && end != CellEnd::kStopped) {
      // One final frame per cell, then the bridge closes: none is open
      // between cells.
      Status sent = outcome.error ? bridge->SendResultError(*outcome.error) : bridge->SendResult(outcome.value_json);
      if (sent.code() == StatusCode::kResourceExhausted) (void)bridge->SendResult("null");
      bridge->Unbind("the tools bridge is open only while a cell runs");
    }
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

int SessionMain(int argc, char** argv, const EngineOptions& base) {
  int control_fd = -1;
  uint64_t heap_mb = 256;
  bool code_mode = false;
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
    } else if (flag == "--code-mode" && n <= 1) {
      code_mode = n == 1;
    } else {
      WriteAll(2, "airlock-js: unknown flag or bad value: " + std::string(flag) + "\n");
      return kExitUsage;
    }
  }
  if (control_fd < 0 || argc % 2 != 0) {
    WriteAll(2, "usage: airlock-js --session --control-fd N [--heap-mb N] [--code-mode 1]\n");
    return kExitUsage;
  }
  EngineOptions options = base;
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
  // Code mode: `tools` and `ToolError`, with no bridge until a cell brings one.
  std::unique_ptr<BridgeClient> bridge;
  if (code_mode) {
    StatusOr<std::unique_ptr<BridgeClient>> b = BridgeClient::Install(**engine, UniqueFd());
    if (!b.ok()) {
      WriteAll(2, "airlock-js: " + b.status().ToString() + "\n");
      return 1;
    }
    bridge = std::move(b).value();
    bridge->Unbind("the tools bridge is open only while a cell runs");
  }
  const int code = RunSessionLoop(**engine, control_fd, bridge.get());
  bridge.reset();  // before the engine: it holds GC roots
  engine->reset();
  return code;
}

}  // namespace airlock::engine::js
