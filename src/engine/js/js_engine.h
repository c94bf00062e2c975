// JsEngine: one SpiderMonkey context and one global with zero ambient
// authority — the reusable core of `airlock-js` (and of the WASM tier).
//
// The global holds only the ECMAScript built-ins (JS::InitRealmStandardClasses;
// `WebAssembly` only when EngineOptions::enable_wasm). There is no module
// loader and no host object of any kind until the embedder adds one with
// DefineHostFunction / DefineReadOnly (console, tools, WASI imports, ...).
//
// Limits:
//   * heap: JSGC_MAX_BYTES. Running out of it stops the program (uncatchably;
//     stop_reason() == kOutOfMemory). Near the limit SpiderMonkey would
//     rather collect garbage after every few allocations than fail, so the
//     engine also declares out-of-memory when several garbage collections in
//     a row end with the heap still over 90% of the limit. Memory allocated
//     outside the GC heap (array elements, string and buffer contents) is not
//     counted by JSGC_MAX_BYTES: cap the process (RLIMIT_DATA, as airlock-js
//     does) and a failed malloc becomes the same clean out-of-memory stop.
//   * deadline: a watchdog thread requests an interrupt when it passes; the
//     interrupt callback then stops the program (stop_reason() == kDeadline),
//     also in the middle of `while (true) {}`.
//   * native stack: a quota below RLIMIT_STACK, so deep recursion throws a
//     catchable InternalError ("too much recursion") instead of crashing.
//
// Running code. StartAsyncBody(code) runs `code` as the body of an async
// function, so top-level `await` and `return` work:
//
//     (async function () {<code>
//     })()
//
// The user's first line stays line 1 of "main.js" (the prefix shares it), so
// error positions are the user's own. The program's value is, in order:
//   1. the value of a top-level `return` if one runs;
//   2. otherwise the value of the LAST top-level statement if that statement is
//      an expression statement (`1 + 2`, `await f()`, `x`) — the host finds it
//      with SpiderMonkey's own parser (Reflect.parse, in a separate private
//      global) and turns it into `return (<expr>);`;
//   3. otherwise undefined.
// Only the very last statement counts: `x; if (c) {}` has no value. The
// returned Promise is driven by RunUntilSettled.
//
// Typical use (see js_main.cc):
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<JsEngine> engine, JsEngine::Create(options));
//   engine->DefineHostFunction(engine->global(), "hello", 0, [](JSContext* cx, JS::CallArgs& a) {...});
//   JS::RootedObject promise(engine->cx());
//   if (!engine->StartAsyncBody(code, "main.js", &promise)) { ...TakePendingError... }
//   JsEngine::LoopResult r = engine->RunUntilSettled(promise, wait_hook);
//
// Threading: everything except the watchdog runs on the thread that called
// Create. SpiderMonkey can be initialised once per process, so a process
// creates at most one JsEngine (Create fails for a second one, even after the
// first is gone: its destructor shuts SpiderMonkey down).
#ifndef AIRLOCK_ENGINE_JS_JS_ENGINE_H_
#define AIRLOCK_ENGINE_JS_JS_ENGINE_H_

#include <js/Initialization.h>
#include <jsapi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/js/deadline_watchdog.h"
#include "wasm/code_cache_file.h"

namespace airlock::engine::js {

using Clock = std::chrono::steady_clock;

struct EngineOptions {
  uint32_t heap_bytes = 256u << 20;          // JSGC_MAX_BYTES (max 4095 MiB)
  std::optional<Clock::time_point> deadline;  // none: no wall-clock limit
  bool enable_wasm = false;                   // keep `WebAssembly` on the global
  size_t native_stack_bytes = 0;              // 0: half of RLIMIT_STACK, <= 4 MiB
  // SpiderMonkey's self-hosted code from this file instead of parsing it
  // (self_hosted_cache.h; ~8 ms less CPU per start). Empty, missing, stale
  // or foreign: parsed, as without.
  std::string self_hosted_cache;
  // When the engine parses its self-hosted code (no self_hosted_cache, or
  // one it cannot use), keep the encoding (self_hosted_encoding()); empty
  // after a start from the cache. `airlock-js --self-hosted-cache-write`
  // and `--self-hosted-status`.
  bool encode_self_hosted = false;
};

// Why the engine stopped running JavaScript against the program's will.
enum class StopReason { kNone, kDeadline, kOutOfMemory };

class JsEngine {
 public:
  // A host function. Return false to throw (with an exception set via
  // JS_ReportError* or JS_SetPendingException) or to propagate a stop.
  using HostFunction = std::function<bool(JSContext* cx, JS::CallArgs& args)>;

  // What the embedder's wait hook did.
  enum class WaitResult {
    kProgress,        // delivered an event (or timed out); run jobs again
    kNothingPending,  // nothing outstanding: waiting would block forever
    kFailed,          // the external channel broke (the hook keeps details)
  };
  // Called when the job queue is empty and the main promise is still pending:
  // block for the next external event, but not past `deadline`.
  using WaitHook = std::function<WaitResult(std::optional<Clock::time_point> deadline)>;

  enum class LoopResult {
    kSettled,       // the promise is fulfilled or rejected
    kNeverSettled,  // no jobs, nothing to wait for, promise still pending
    kStopped,       // deadline or out of memory: see stop_reason()
    kWaitFailed,    // the wait hook returned kFailed
  };

  static StatusOr<std::unique_ptr<JsEngine>> Create(const EngineOptions& options);
  ~JsEngine();
  JsEngine(const JsEngine&) = delete;
  JsEngine& operator=(const JsEngine&) = delete;

  JSContext* cx() const { return cx_; }
  // The self-hosted code's encoding if the engine parsed it
  // (EngineOptions::encode_self_hosted).
  std::string_view self_hosted_encoding() const { return self_hosted_encoding_; }
  JS::HandleObject global() const { return *global_; }

  // A new function object calling `fn`; null on failure (exception pending).
  // `fn` lives as long as the engine; it is not reachable from script.
  JSObject* NewHostFunction(const char* name, unsigned nargs, HostFunction fn);
  // Defines obj[name] = NewHostFunction(...) with property attributes
  // `attrs` (JSPROP_*; the default is read-only, permanent, enumerable).
  static constexpr unsigned kLockedAttrs = JSPROP_READONLY | JSPROP_PERMANENT | JSPROP_ENUMERATE;
  bool DefineHostFunction(JS::HandleObject obj, const char* name, unsigned nargs, HostFunction fn,
                          unsigned attrs = kLockedAttrs);
  // Defines obj[name] = value, read-only, permanent and not enumerable.
  bool DefineReadOnly(JS::HandleObject obj, const char* name, JS::HandleValue value);

  // Runs `source` as a classic script in the global; *rval is its completion
  // value. False: an exception is pending, or execution was stopped.
  bool EvaluateScript(std::string_view source, const char* filename, unsigned line,
                      JS::MutableHandleValue rval);

  // Starts `code` as an async function body (see the header comment);
  // *promise settles with the program's value. False: an exception is pending
  // (e.g. a SyntaxError) or execution was stopped.
  bool StartAsyncBody(std::string_view code, const char* filename,
                      JS::MutableHandleObject promise);

  // Runs queued jobs (promise reactions) until none are left or a stop.
  void RunJobs();

  // Alternates RunJobs and `wait` until `promise` settles. `wait` may be
  // empty (then there is never anything to wait for).
  LoopResult RunUntilSettled(JS::HandleObject promise, const WaitHook& wait);

  StopReason stop_reason() const { return stop_reason_.load(); }
  std::optional<Clock::time_point> deadline() const { return options_.deadline; }
  // Sets the wall-clock deadline of an engine created without one (a
  // pre-started engine learns it when its program arrives). Only once.
  Status SetDeadline(Clock::time_point deadline);
  const EngineOptions& options() const { return options_; }

 private:
  explicit JsEngine(const EngineOptions& options) : options_(options) {}
  Status Init();
  void RequestStop(StopReason reason);
  bool CheckDeadline();

  // JS::InitSelfHostedCode from options_.self_hosted_cache, or parsed.
  Status InitSelfHosted();
  static bool KeepSelfHostedEncoding(JSContext* cx, JS::SelfHostedCache encoding);
  static bool InterruptCallback(JSContext* cx);
  static void OutOfMemoryCallback(JSContext* cx, void* data);
  static void GcCallback(JSContext* cx, JSGCStatus status, JS::GCReason reason, void* data);
  static bool HostFunctionTrampoline(JSContext* cx, unsigned argc, JS::Value* vp);

  // The engine may read the mapping until JS_ShutDown, which the
  // destructor's body calls; members go after it.
  wasm::MappedCode self_hosted_;
  std::string self_hosted_encoding_;
  EngineOptions options_;
  JSContext* cx_ = nullptr;
  std::unique_ptr<JS::PersistentRootedObject> global_;
  std::unique_ptr<JSAutoRealm> realm_;
  std::vector<HostFunction> host_functions_;
  std::atomic<StopReason> stop_reason_{StopReason::kNone};
  int full_heap_gcs_ = 0;  // consecutive GCs that left the heap nearly full
  DeadlineWatchdog watchdog_;
};

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_JS_ENGINE_H_
