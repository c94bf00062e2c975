#include "engine/js/js_engine.h"

#include <sys/resource.h>

#include <algorithm>
#include <mutex>

#include <js/CompilationAndEvaluation.h>
#include <js/CompileOptions.h>
#include <js/ContextOptions.h>
#include <js/GCAPI.h>
#include <js/GlobalObject.h>
#include <js/Initialization.h>
#include <js/Interrupt.h>
#include <js/Promise.h>
#include <js/PropertyAndElement.h>
#include <js/RealmOptions.h>
#include <js/SourceText.h>
#include <jsfriendapi.h>

#include "engine/js/async_body.h"
#include "engine/js/self_hosted_cache.h"
#include "engine/js/wasm_code.h"

namespace airlock::engine::js {
namespace {

const JSClass kGlobalClass = {"AirlockGlobal", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps, nullptr, nullptr, nullptr};

// This many garbage collections in a row that leave the heap over 90% full
// count as out of memory (see js_engine.h).
constexpr int kFullHeapGcsForOom = 3;

constexpr size_t kMaxNativeStack = size_t{4} << 20;
constexpr size_t kMinNativeStack = size_t{256} << 10;

size_t NativeStackQuota(size_t requested) {
  if (requested != 0) return requested;
  struct rlimit rl {};
  size_t limit = size_t{8} << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) limit = rl.rlim_cur;
  return std::clamp(limit / 2, kMinNativeStack, kMaxNativeStack);
}

// SpiderMonkey can be initialised once per process (JS_Init ... JS_ShutDown),
// so a process hosts at most one engine, ever.
std::atomic<bool> engine_created{false};

}  // namespace

StatusOr<std::unique_ptr<JsEngine>> JsEngine::Create(const EngineOptions& options) {
  if (engine_created.exchange(true)) {
    return FailedPrecondition("only one JsEngine can be created per process");
  }
  if (!JS_Init()) return Internal("JS_Init failed");
  std::unique_ptr<JsEngine> engine(new JsEngine(options));
  AIRLOCK_RETURN_IF_ERROR(engine->Init());
  return engine;
}

Status JsEngine::Init() {
  cx_ = JS_NewContext(JS::DefaultHeapMaxBytes);
  if (!cx_) return Internal("JS_NewContext failed");
  JS_SetContextPrivate(cx_, this);
  JS_SetGCParameter(cx_, JSGC_MAX_BYTES, options_.heap_bytes);
  JS_SetNativeStackQuota(cx_, NativeStackQuota(options_.native_stack_bytes));
  JS::ContextOptionsRef(cx_).setWasm(options_.enable_wasm);
  if (!::js::UseInternalJobQueues(cx_)) return Internal("UseInternalJobQueues failed");
  AIRLOCK_RETURN_IF_ERROR(InitSelfHosted());
  // Before the standard classes: WebAssembly.compileStreaming exists only
  // in a context that has a stream callback (wasm_code.h).
  if (options_.enable_wasm) InstallWasmStreaming(cx_);
  JS_AddInterruptCallback(cx_, &JsEngine::InterruptCallback);
  JS::SetOutOfMemoryCallback(cx_, &JsEngine::OutOfMemoryCallback, this);
  JS_SetGCCallback(cx_, &JsEngine::GcCallback, this);

  JS::RealmOptions realm_options;
  global_ = std::make_unique<JS::PersistentRootedObject>(
      cx_, JS_NewGlobalObject(cx_, &kGlobalClass, nullptr, JS::FireOnNewGlobalHook, realm_options));
  if (!*global_) return Internal("JS_NewGlobalObject failed");
  realm_ = std::make_unique<JSAutoRealm>(cx_, *global_);
  if (!JS::InitRealmStandardClasses(cx_)) return Internal("InitRealmStandardClasses failed");
  if (!options_.enable_wasm) {
    bool ignored = false;
    if (!JS_DeleteProperty(cx_, *global_, "WebAssembly")) {
      return Internal("could not remove WebAssembly from the global");
    }
    if (!JS_HasProperty(cx_, *global_, "WebAssembly", &ignored) || ignored) {
      return Internal("WebAssembly is still on the global");
    }
  }
  if (options_.deadline) {
    watchdog_.Start(*options_.deadline, [this] { RequestStop(StopReason::kDeadline); });
  }
  return OkStatus();
}

Status JsEngine::InitSelfHosted() {
  // The engine calls the writer only when it parsed (no encoding given, or
  // one it could not decode). Encoding and decoding both ask for the build
  // id, whose op WasmCodeBuildId (and MapSelfHostedCache) sets.
  JS::SelfHostedWriter writer = nullptr;
  if (options_.encode_self_hosted) {
    (void)WasmCodeBuildId();
    writer = &JsEngine::KeepSelfHostedEncoding;
  }
  if (!options_.self_hosted_cache.empty()) {
    StatusOr<wasm::MappedCode> mapped = MapSelfHostedCache(options_.self_hosted_cache);
    if (mapped.ok()) self_hosted_ = std::move(*mapped);  // else: parsed, as without
  }
  const std::string_view bytes = self_hosted_.encoding();
  if (!JS::InitSelfHostedCode(cx_, JS::SelfHostedCache(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                              writer)) {
    return Internal("InitSelfHostedCode failed");
  }
  return OkStatus();
}

bool JsEngine::KeepSelfHostedEncoding(JSContext* cx, JS::SelfHostedCache encoding) {
  auto* engine = static_cast<JsEngine*>(JS_GetContextPrivate(cx));
  engine->self_hosted_encoding_.assign(reinterpret_cast<const char*>(encoding.data()), encoding.size());
  return true;
}

Status JsEngine::SetDeadline(Clock::time_point deadline) {
  if (options_.deadline) return FailedPrecondition("the engine already has a deadline");
  options_.deadline = deadline;
  watchdog_.Start(deadline, [this] { RequestStop(StopReason::kDeadline); });
  return OkStatus();
}

JsEngine::~JsEngine() {
  watchdog_.Stop();
  if (cx_) {
    realm_.reset();
    global_.reset();
    JS_DestroyContext(cx_);
  }
  // Stops SpiderMonkey's helper threads; without it static destructors at
  // exit race with them. SpiderMonkey cannot be initialised again afterwards,
  // which is why Create refuses a second engine.
  JS_ShutDown();
}

void JsEngine::RequestStop(StopReason reason) {
  StopReason expected = StopReason::kNone;
  stop_reason_.compare_exchange_strong(expected, reason);
  JS_RequestInterruptCallback(cx_);  // thread-safe
}

bool JsEngine::CheckDeadline() {
  if (options_.deadline && Clock::now() >= *options_.deadline) {
    RequestStop(StopReason::kDeadline);
  }
  return stop_reason() != StopReason::kNone;
}

bool JsEngine::InterruptCallback(JSContext* cx) {
  auto* self = static_cast<JsEngine*>(JS_GetContextPrivate(cx));
  if (self->stop_reason() == StopReason::kNone) return true;
  ::js::StopDrainingJobQueue(cx);
  return false;  // uncatchable: the running script ends
}

void JsEngine::OutOfMemoryCallback(JSContext* cx, void* data) {
  // Must not allocate here. Stopping at the next interrupt check makes the
  // out-of-memory final even if the program catches the error.
  static_cast<JsEngine*>(data)->RequestStop(StopReason::kOutOfMemory);
}

void JsEngine::GcCallback(JSContext* cx, JSGCStatus status, JS::GCReason reason, void* data) {
  if (status != JSGC_END) return;
  auto* self = static_cast<JsEngine*>(data);
  const uint64_t live = JS_GetGCParameter(cx, JSGC_BYTES);
  if (live * 10 >= uint64_t{self->options_.heap_bytes} * 9) {
    if (++self->full_heap_gcs_ >= kFullHeapGcsForOom) self->RequestStop(StopReason::kOutOfMemory);
  } else {
    self->full_heap_gcs_ = 0;
  }
}

bool JsEngine::HostFunctionTrampoline(JSContext* cx, unsigned argc, JS::Value* vp) {
  JS::CallArgs args = JS::CallArgsFromVp(argc, vp);
  auto* self = static_cast<JsEngine*>(JS_GetContextPrivate(cx));
  const JS::Value& slot = ::js::GetFunctionNativeReserved(&args.callee(), 0);
  if (!slot.isInt32() || slot.toInt32() < 0 ||
      static_cast<size_t>(slot.toInt32()) >= self->host_functions_.size()) {
    JS_ReportErrorASCII(cx, "internal error: unknown host function");
    return false;
  }
  return self->host_functions_[slot.toInt32()](cx, args);
}

JSObject* JsEngine::NewHostFunction(const char* name, unsigned nargs, HostFunction fn) {
  JSFunction* fun = ::js::NewFunctionWithReserved(cx_, &JsEngine::HostFunctionTrampoline, nargs, 0, name);
  if (!fun) return nullptr;
  JSObject* obj = JS_GetFunctionObject(fun);
  ::js::SetFunctionNativeReserved(obj, 0, JS::Int32Value(static_cast<int32_t>(host_functions_.size())));
  host_functions_.push_back(std::move(fn));
  return obj;
}

bool JsEngine::DefineHostFunction(JS::HandleObject obj, const char* name, unsigned nargs,
                                  HostFunction fn, unsigned attrs) {
  JS::RootedObject fun(cx_, NewHostFunction(name, nargs, std::move(fn)));
  if (!fun) return false;
  return JS_DefineProperty(cx_, obj, name, fun, attrs);
}

bool JsEngine::DefineReadOnly(JS::HandleObject obj, const char* name, JS::HandleValue value) {
  return JS_DefineProperty(cx_, obj, name, value, JSPROP_READONLY | JSPROP_PERMANENT);
}

bool JsEngine::EvaluateScript(std::string_view source, const char* filename, unsigned line,
                              JS::MutableHandleValue rval) {
  JS::CompileOptions opts(cx_);
  opts.setFileAndLine(filename, line);
  JS::SourceText<mozilla::Utf8Unit> src;
  if (!src.init(cx_, source.data(), source.size(), JS::SourceOwnership::Borrowed)) return false;
  return JS::Evaluate(cx_, opts, src, rval);
}

bool JsEngine::StartAsyncBody(std::string_view code, const char* filename,
                              JS::MutableHandleObject promise) {
  std::string source = BuildAsyncBodySource(cx_, code);
  if (CheckDeadline()) return false;
  JS::RootedValue rval(cx_);
  if (!EvaluateScript(source, filename, 1, &rval)) return false;
  // Code that closes the wrapper early (`}); 5; (async function () {`) can
  // leave another completion value; it is then taken as the program's value.
  if (rval.isObject()) {
    JS::RootedObject obj(cx_, &rval.toObject());
    if (JS::IsPromiseObject(obj)) {
      promise.set(obj);
      return true;
    }
  }
  promise.set(JS::CallOriginalPromiseResolve(cx_, rval));
  return promise != nullptr;
}

void JsEngine::RunJobs() {
  if (stop_reason() != StopReason::kNone) return;
  ::js::RunJobs(cx_);
}

JsEngine::LoopResult JsEngine::RunUntilSettled(JS::HandleObject promise, const WaitHook& wait) {
  while (true) {
    if (CheckDeadline()) return LoopResult::kStopped;
    RunJobs();
    if (CheckDeadline()) return LoopResult::kStopped;
    if (JS::GetPromiseState(promise) != JS::PromiseState::Pending) return LoopResult::kSettled;
    if (!wait) return LoopResult::kNeverSettled;
    switch (wait(options_.deadline)) {
      case WaitResult::kProgress: break;
      case WaitResult::kNothingPending: return LoopResult::kNeverSettled;
      case WaitResult::kFailed: return LoopResult::kWaitFailed;
    }
  }
}

}  // namespace airlock::engine::js
