// airlock-js: runs one JavaScript program in an embedded SpiderMonkey with
// zero ambient authority. It is meant to run INSIDE airlock's native jail.
//
//   airlock-js [--heap-mb N] [--deadline-ms N] [--bridge-fd N|none]
//              [--max-console-bytes N] [--enable-wasm] [--resume-fd N] SCRIPT_PATH
//
// Other modes: `--wasi` (wasi_runner.h), `--wasi-ruby` (ruby_runner.h),
// `--session` (a session interpreter, js_session.h), `--wasm-code-cache`
// (wasi_runner.h) and `--self-hosted-cache-write` (self_hosted_cache.h).
// Any mode may be preceded by `--self-hosted-cache FILE`: the engine starts
// from that encoding of its self-hosted code instead of parsing it.
//
// The program sees only the ECMAScript built-ins, `console`, and — when a
// bridge fd is given — `tools` and `ToolError` (see bridge_client.h). The
// code runs as the body of an async function (top-level await and return
// work; the last expression statement is the value — js_engine.h has the
// exact rule).
//
// Result reporting:
//   * with a bridge: one final frame, {"op":"result","value":<JSON>} or
//     {"op":"result_error","error":{name,message,stack}};
//   * without: the value's JSON on stdout (nothing if it is undefined).
//   Errors are also printed to stderr ("Uncaught Name: message" + stack).
// result_error names beyond the program's own errors: E_RESULT_NOT_JSON (the
// value has no JSON form: function, symbol, BigInt, cycle), E_LIMIT_RESULT
// (value over the 2 MiB frame limit), E_NEVER_SETTLED (the program awaits
// something that can never happen), E_LIMIT_WALLCLOCK, E_LIMIT_MEMORY,
// E_BRIDGE_PROTOCOL (the bridge broke or sent a bad frame).
//
// Memory: --heap-mb N (default 256) is the JavaScript GC heap limit; the
// process's RLIMIT_DATA is lowered to N + 64 MiB so memory outside the GC heap
// is bounded too. Either limit ends the run with E_LIMIT_MEMORY / exit 3.
// Keep N + 64 MiB below the jail's cgroup memory limit.
//
// Exit codes: 0 success, 1 uncaught error (or any result_error above except
// the two limits), 2 usage error, 3 out of memory, 124 deadline.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <js/Promise.h>
#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"
#include "engine/js/bridge_client.h"
#include "engine/js/js_console.h"
#include "engine/js/js_engine.h"
#include "engine/js/js_errors.h"
#include "engine/js/js_json.h"
#include "engine/js/js_session.h"
#include "engine/js/python_session.h"
#include "engine/js/ruby_runner.h"
#include "engine/js/self_hosted_cache.h"
#include "engine/js/wasi_runner.h"
#include "engine/js/write_all.h"

namespace airlock::engine::js {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUncaught = 1;
constexpr int kExitUsage = 2;
constexpr int kExitOutOfMemory = 3;
constexpr int kExitDeadline = 124;

struct Flags {
  uint32_t heap_mb = 256;
  uint64_t deadline_ms = 0;
  int bridge_fd = -1;
  uint64_t max_console_bytes = 0;
  bool enable_wasm = false;
  std::string script_path;
  std::vector<std::string> script_args;  // after the script: the global `scriptArgs`
  // Pre-started (--resume-fd N; code mode's with its bridge): the engine and its
  // globals start up now; then fd N delivers "DEADLINE_MS\0ARG\0ARG\0..."
  // and EOF (airlock-init's hand-over), and only then is the script read,
  // scriptArgs defined (the hand-over's arguments after the command line's)
  // and the deadline started.
  int resume_fd = -1;
};

void WriteStderr(const std::string& s) { (void)WriteAll(2, s); }
void WriteStdout(const std::string& s) { (void)WriteAll(1, s); }

constexpr char kUsage[] =
    "usage: airlock-js [--heap-mb N] [--deadline-ms N] [--bridge-fd N|none]\n"
    "                  [--max-console-bytes N] [--enable-wasm] [--resume-fd N] SCRIPT_PATH [ARG...]\n";

std::optional<uint64_t> ParseUint(std::string_view s, uint64_t max) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > max) return std::nullopt;
  return v;
}

StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::optional<std::string_view> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string_view(argv[++i]);
    };
    if (a == "--enable-wasm") {
      f.enable_wasm = true;
    } else if (a == "--heap-mb" || a == "--deadline-ms" || a == "--bridge-fd" || a == "--max-console-bytes" ||
               a == "--resume-fd") {
      std::optional<std::string_view> v = value();
      if (!v) return InvalidArgument(std::string(a) + " needs a value");
      if (a == "--bridge-fd" && *v == "none") {
        f.bridge_fd = -1;
        continue;
      }
      const uint64_t max = a == "--heap-mb" ? 4095 : (a == "--bridge-fd" || a == "--resume-fd") ? 1 << 20 : UINT64_MAX / 2;
      std::optional<uint64_t> n = ParseUint(*v, max);
      if (!n || (a == "--heap-mb" && *n < 8)) return InvalidArgument("bad value for " + std::string(a));
      if (a == "--heap-mb") f.heap_mb = static_cast<uint32_t>(*n);
      if (a == "--deadline-ms") f.deadline_ms = *n;
      if (a == "--bridge-fd") f.bridge_fd = static_cast<int>(*n);
      if (a == "--max-console-bytes") f.max_console_bytes = *n;
      if (a == "--resume-fd") f.resume_fd = static_cast<int>(*n);
    } else if (!a.empty() && a[0] == '-') {
      return InvalidArgument("unknown flag " + std::string(a));
    } else if (f.script_path.empty()) {
      f.script_path = std::string(a);
      for (++i; i < argc; ++i) f.script_args.emplace_back(argv[i]);  // the rest belongs to the script
    } else {
      return InvalidArgument("only one script may be given");
    }
  }
  if (f.script_path.empty()) return InvalidArgument("no script given");
  if (f.resume_fd >= 0 && (f.resume_fd <= 2 || f.resume_fd == f.bridge_fd || ::fcntl(f.resume_fd, F_GETFD) < 0)) {
    return InvalidArgument("--resume-fd needs an open descriptor above 2, other than the bridge's");
  }
  if (f.bridge_fd >= 0 && (f.bridge_fd <= 2 || ::fcntl(f.bridge_fd, F_GETFD) < 0)) {
    return InvalidArgument("--bridge-fd " + std::to_string(f.bridge_fd) + " is not an open descriptor above 2");
  }
  return f;
}

// Memory the engine itself needs beyond the heap (code, ICU, thread stacks).
constexpr uint64_t kDataOverheadBytes = uint64_t{64} << 20;

// Lowers RLIMIT_DATA to `bytes` (never raises it).
Status LimitProcessData(uint64_t bytes) {
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_DATA, &rl) != 0) return ErrnoError("getrlimit(RLIMIT_DATA)");
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= bytes) return OkStatus();
  rl.rlim_cur = bytes;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < bytes) rl.rlim_cur = rl.rlim_max;
  if (::setrlimit(RLIMIT_DATA, &rl) != 0) return ErrnoError("setrlimit(RLIMIT_DATA)");
  return OkStatus();
}

StatusOr<std::string> ReadScript(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open " + path);
  std::string data;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read " + path);
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

constexpr size_t kMaxStackFrames = 50;
constexpr char kScriptName[] = "main.js";

// One program run: the engine, the optional bridge, and how results leave.
class Run {
 public:
  Run(JsEngine& engine, BridgeClient* bridge, const Flags& flags, const std::string& code)
      : engine_(engine), bridge_(bridge), flags_(flags), code_(code) {
    for (char c : code) last_user_line_ += c == '\n';
  }

  // Runs the program and reports its outcome; returns the exit code.
  int Execute() {
    JSContext* cx = engine_.cx();
    JS::RootedObject promise(cx);
    if (!engine_.StartAsyncBody(code_, kScriptName, &promise)) return FailFromPending();

    JsEngine::WaitHook wait;
    if (bridge_) {
      wait = [this](std::optional<Clock::time_point> deadline) { return bridge_->Wait(deadline); };
    }
    switch (engine_.RunUntilSettled(promise, wait)) {
      case JsEngine::LoopResult::kStopped:
        return FailStopped();
      case JsEngine::LoopResult::kWaitFailed:
        return Fail({"E_BRIDGE_PROTOCOL", bridge_->failure().message(), ""}, kExitUncaught, false);
      case JsEngine::LoopResult::kNeverSettled:
        return Fail({"E_NEVER_SETTLED",
                     "the program is waiting for a promise that nothing can settle (no tool call is pending)",
                     ""},
                    kExitUncaught, false);
      case JsEngine::LoopResult::kSettled:
        break;
    }
    JS::RootedValue result(cx, JS::GetPromiseResult(promise));
    if (JS::GetPromiseState(promise) == JS::PromiseState::Rejected) {
      JS::RootedObject site(cx, JS::GetPromiseResolutionSite(promise));
      ErrorInfo error = DescribeError(cx, result, site);
      if (engine_.stop_reason() != StopReason::kNone) return FailStopped();
      return Fail(std::move(error), kExitUncaught, true);
    }
    return Succeed(result);
  }

 private:
  // Reports a failed run; returns `exit_code`.
  int Fail(ErrorInfo error, int exit_code, bool uncaught) {
    error.stack = TidyStack(error.stack, kScriptName, last_user_line_, kMaxStackFrames);
    if (uncaught) {
      WriteStderr(FormatUncaught(error));
    } else {
      WriteStderr("airlock-js: " + error.name + ": " + error.message + "\n");
    }
    if (bridge_) {
      Status st = bridge_->SendResultError(error);
      if (!st.ok()) WriteStderr("airlock-js: cannot send result_error: " + st.ToString() + "\n");
    }
    return exit_code;
  }

  int FailStopped() {
    if (engine_.stop_reason() == StopReason::kOutOfMemory) {
      return Fail({"E_LIMIT_MEMORY",
                   "out of memory: the JavaScript heap limit of " + std::to_string(flags_.heap_mb) +
                       " MiB was reached",
                   ""},
                  kExitOutOfMemory, false);
    }
    if (engine_.stop_reason() == StopReason::kDeadline) {
      return Fail({"E_LIMIT_WALLCLOCK",
                   "the program ran past its deadline of " + std::to_string(flags_.deadline_ms) + " ms", ""},
                  kExitDeadline, false);
    }
    return Fail({"InternalError", "execution was terminated", ""}, kExitUncaught, true);
  }

  // Reports the pending exception (or the stop that ended execution).
  int FailFromPending() {
    if (engine_.stop_reason() != StopReason::kNone) return FailStopped();
    std::optional<ErrorInfo> error = TakePendingError(engine_.cx());
    if (!error || engine_.stop_reason() != StopReason::kNone) return FailStopped();
    return Fail(std::move(*error), kExitUncaught, true);
  }

  int Succeed(JS::HandleValue value) {
    JSContext* cx = engine_.cx();
    std::optional<std::string> json;
    if (!ToJson(cx, value, &json)) {
      if (engine_.stop_reason() != StopReason::kNone || !JS_IsExceptionPending(cx)) return FailStopped();
      std::optional<ErrorInfo> why = TakePendingError(cx);
      return Fail({"E_RESULT_NOT_JSON",
                   "the program's value cannot be converted to JSON: " + (why ? why->message : ""), ""},
                  kExitUncaught, false);
    }
    if (!json && !value.isUndefined()) {
      return Fail({"E_RESULT_NOT_JSON",
                   std::string("the program's value is a ") + (value.isSymbol() ? "symbol" : "function") +
                       ", which has no JSON form",
                   ""},
                  kExitUncaught, false);
    }
    if (!bridge_) {
      if (json) WriteStdout(*json + "\n");
      return kExitOk;
    }
    Status st = bridge_->SendResult(json ? *json : "null");
    if (st.code() == StatusCode::kResourceExhausted) {
      return Fail({"E_LIMIT_RESULT", st.message(), ""}, kExitUncaught, false);
    }
    if (!st.ok()) {
      WriteStderr("airlock-js: cannot send the result: " + st.ToString() + "\n");
      return kExitUncaught;
    }
    return kExitOk;
  }

  JsEngine& engine_;
  BridgeClient* bridge_;
  const Flags& flags_;
  const std::string& code_;
  unsigned last_user_line_ = 1;
};

int Main(int argc, char** argv) {
  const Clock::time_point start = Clock::now();
  // `--self-hosted-cache FILE` first, before the mode flag: how any mode
  // starts its engine (self_hosted_cache.h).
  EngineOptions base;
  if (argc >= 3 && std::string_view(argv[1]) == "--self-hosted-cache") {
    base.self_hosted_cache = argv[2];
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    const std::string line = "SpiderMonkey " + std::to_string(MOZJS_MAJOR_VERSION) + "." +
                             std::to_string(MOZJS_MINOR_VERSION) + " (airlock-js " AIRLOCK_VERSION ")\n";
    return ::write(1, line.data(), line.size()) == static_cast<ssize_t>(line.size()) ? kExitOk : kExitUsage;
  }
  if (argc >= 2 && std::string_view(argv[1]) == "--wasi") return WasiMain(argc, argv, base);
  if (argc >= 2 && std::string_view(argv[1]) == "--self-hosted-cache-write") return SelfHostedCacheMain(argc, argv);
  if (argc >= 2 && std::string_view(argv[1]) == "--self-hosted-status") return SelfHostedStatusMain(argc, argv, base);
  if (argc >= 2 && std::string_view(argv[1]) == "--wasm-code-cache") return WasmCodeCacheMain(argc, argv);
  if (argc >= 2 && std::string_view(argv[1]) == "--wasi-ruby") return RubyMain(argc, argv, base);
  if (argc >= 2 && std::string_view(argv[1]) == "--session") return SessionMain(argc, argv, base);
  if (argc >= 2 && std::string_view(argv[1]) == "--wasi-session") return PythonSessionMain(argc, argv, base);
  StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    WriteStderr("airlock-js: " + flags.status().message() + "\n" + kUsage);
    return kExitUsage;
  }
  StatusOr<std::string> code = std::string();
  if (flags->resume_fd < 0) {
    code = ReadScript(flags->script_path);
    if (!code.ok()) {
      WriteStderr("airlock-js: " + code.status().message() + "\n");
      return kExitUsage;
    }
  }

  // The GC heap limit does not see malloc'd memory (array elements, strings,
  // buffers); RLIMIT_DATA caps that too, so a failed malloc becomes a clean
  // out-of-memory stop instead of the jail's OOM killer.
  Status limited = LimitProcessData((uint64_t{flags->heap_mb} << 20) + kDataOverheadBytes);
  if (!limited.ok()) WriteStderr("airlock-js: " + limited.ToString() + "\n");

  EngineOptions options = base;
  options.heap_bytes = flags->heap_mb << 20;
  if (flags->deadline_ms > 0) options.deadline = start + std::chrono::milliseconds(flags->deadline_ms);
  options.enable_wasm = flags->enable_wasm;
  StatusOr<std::unique_ptr<JsEngine>> engine = JsEngine::Create(options);
  if (!engine.ok()) {
    WriteStderr("airlock-js: cannot start the engine: " + engine.status().ToString() + "\n");
    return kExitUncaught;
  }
  ConsoleOptions console;
  console.max_bytes = flags->max_console_bytes;
  Status st = InstallConsole(**engine, console);
  if (!st.ok()) {
    WriteStderr("airlock-js: " + st.ToString() + "\n");
    return kExitUncaught;
  }
  if (flags->resume_fd >= 0) {
    // Everything above was paid before the run; the run starts here.
    HandOver h = ReadHandOver(flags->resume_fd);
    flags->script_args.insert(flags->script_args.end(), h.args.begin(), h.args.end());
    if (h.deadline_ms > 0) {
      flags->deadline_ms = h.deadline_ms;
      if (Status d = (*engine)->SetDeadline(Clock::now() + std::chrono::milliseconds(h.deadline_ms)); !d.ok()) {
        WriteStderr("airlock-js: " + d.ToString() + "\n");
        return kExitUncaught;
      }
    }
    code = ReadScript(flags->script_path);
    if (!code.ok()) {
      WriteStderr("airlock-js: " + code.status().message() + "\n");
      return kExitUsage;
    }
  }
  if (flags->bridge_fd < 0) {
    // scriptArgs: the arguments after the script, a frozen array of strings
    // (the WASM tier's JavaScript; code mode's global stays exactly as it was).
    const std::string literal = "Object.freeze(" + nlohmann::json(flags->script_args).dump() + ")";
    JS::RootedValue args((*engine)->cx());
    if (!(*engine)->EvaluateScript(literal, "airlock-args", 1, &args) ||
        !(*engine)->DefineReadOnly((*engine)->global(), "scriptArgs", args)) {
      WriteStderr("airlock-js: cannot define scriptArgs\n");
      return kExitUncaught;
    }
  }
  std::unique_ptr<BridgeClient> bridge;
  if (flags->bridge_fd >= 0) {
    StatusOr<std::unique_ptr<BridgeClient>> b = BridgeClient::Install(**engine, UniqueFd(flags->bridge_fd));
    if (!b.ok()) {
      WriteStderr("airlock-js: " + b.status().ToString() + "\n");
      return kExitUncaught;
    }
    bridge = std::move(b).value();
  }
  int exit_code = Run(**engine, bridge.get(), *flags, *code).Execute();
  bridge.reset();  // drops its GC roots before the context goes
  engine->reset();
  return exit_code;
}

}  // namespace
}  // namespace airlock::engine::js

int main(int argc, char** argv) { return airlock::engine::js::Main(argc, argv); }
