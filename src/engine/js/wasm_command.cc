#include "engine/js/wasm_command.h"

#include <js/ArrayBuffer.h>
#include <js/BigInt.h>
#include <js/CallAndConstruct.h>
#include <js/GCVector.h>

#include <cstring>
#include <memory>

#include "engine/js/js_errors.h"

namespace airlock::engine::js {
namespace {

// new WebAssembly.Instance(module or new WebAssembly.Module(bytes),
// imports), from the engine's own copy of WebAssembly taken before any user
// code ran.
constexpr char kGlue[] =
    "(function (bytes, module, imports) {\n"
    "  return new WebAssembly.Instance(module || new WebAssembly.Module(bytes), imports);\n"
    "})";

}  // namespace

// The state host functions share with the instance.
struct WasmInstance::State {
  JS::PersistentRootedObject memory;   // exports.memory, or null
  JS::PersistentRootedObject exports;  // instance.exports
  bool exited = false;
  int32_t exit_code = 0;
  explicit State(JSContext* cx) : memory(cx), exports(cx) {}
};

namespace {

using State = WasmInstance::State;

std::span<uint8_t> CurrentMemory(JSContext* cx, State& state) {
  if (!state.memory) return {};
  JS::RootedValue buffer(cx);
  if (!JS_GetProperty(cx, state.memory, "buffer", &buffer) || !buffer.isObject()) return {};
  JSObject* obj = &buffer.toObject();
  if (!JS::IsArrayBufferObject(obj)) return {};
  bool shared = false;
  JS::AutoCheckCannotGC nogc;
  uint8_t* data = JS::GetArrayBufferData(obj, &shared, nogc);
  return {data, JS::GetArrayBufferByteLength(obj)};
}

WasmOutcome Failure(JsEngine& engine, WasmOutcome::Kind kind_if_exception) {
  WasmOutcome out;
  switch (engine.stop_reason()) {
    case StopReason::kDeadline:
      out.kind = WasmOutcome::Kind::kDeadline;
      out.message = "the wall-clock limit was reached";
      return out;
    case StopReason::kOutOfMemory:
      out.kind = WasmOutcome::Kind::kOutOfMemory;
      out.message = "out of memory";
      return out;
    case StopReason::kNone:
      break;
  }
  std::optional<ErrorInfo> error = TakePendingError(engine.cx());
  if (!error) {
    out.kind = WasmOutcome::Kind::kError;
    out.message = "the run was stopped";
    return out;
  }
  out.message = error->name + ": " + error->message;
  if (error->message == "[object WebAssembly.Exception]") {
    // A WebAssembly exception nothing in the module caught: with the WASM
    // tier's setjmp kit (runtimes/wasm_setjmp_kit.h), a longjmp to a setjmp
    // whose function has already returned. A trap, as in native code.
    out.kind = WasmOutcome::Kind::kTrap;
    out.message = "uncaught WebAssembly exception (a longjmp to a setjmp whose function has returned?)";
    return out;
  }
  if (error->name == "RuntimeError" || error->message.find("too much recursion") != std::string::npos) {
    out.kind = WasmOutcome::Kind::kTrap;
  } else if (error->name == "CompileError" || error->name == "LinkError") {
    out.kind = WasmOutcome::Kind::kInvalid;
  } else {
    out.kind = kind_if_exception;
  }
  return out;
}

}  // namespace

const char* WasmOutcomeName(WasmOutcome::Kind kind) {
  switch (kind) {
    case WasmOutcome::Kind::kReturned: return "returned";
    case WasmOutcome::Kind::kExited: return "exited";
    case WasmOutcome::Kind::kTrap: return "trap";
    case WasmOutcome::Kind::kDeadline: return "deadline";
    case WasmOutcome::Kind::kOutOfMemory: return "out_of_memory";
    case WasmOutcome::Kind::kInvalid: return "invalid_module";
    case WasmOutcome::Kind::kError: return "error";
  }
  return "error";
}

WasmInstance::WasmInstance(JsEngine& engine, std::shared_ptr<State> state)
    : engine_(engine), state_(std::move(state)) {}

WasmInstance::~WasmInstance() {
  // The host functions (and so `state_`) live as long as the engine; the
  // roots must not outlive the instance (nor the context).
  state_->memory.reset();
  state_->exports.reset();
}

std::unique_ptr<WasmInstance> WasmInstance::Create(JsEngine& engine, std::string_view module_bytes,
                                                   const std::vector<HostImport>& imports, WasmOutcome* failure,
                                                   JS::HandleObject compiled) {
  JSContext* cx = engine.cx();
  auto state = std::make_shared<State>(cx);
  std::unique_ptr<WasmInstance> instance(new WasmInstance(engine, state));
  auto fail = [&](WasmOutcome::Kind kind) {
    *failure = Failure(engine, kind);
    return nullptr;
  };

  // The module: `compiled` if given, otherwise its bytes, copied into an
  // ArrayBuffer, are compiled below.
  JS::RootedObject bytes(cx);
  if (!compiled) {
    bytes = JS::NewArrayBuffer(cx, module_bytes.size());
    if (!bytes) return fail(WasmOutcome::Kind::kError);
    bool shared = false;
    JS::AutoCheckCannotGC nogc;
    std::memcpy(JS::GetArrayBufferData(bytes, &shared, nogc), module_bytes.data(), module_bytes.size());
  }

  // imports[module][name] = a host function.
  JS::RootedObject import_object(cx, JS_NewPlainObject(cx));
  if (!import_object) return fail(WasmOutcome::Kind::kError);
  for (const HostImport& imp : imports) {
    JS::RootedValue ns(cx);
    if (!JS_GetProperty(cx, import_object, imp.module.c_str(), &ns)) return fail(WasmOutcome::Kind::kError);
    if (!ns.isObject()) {
      JS::RootedObject created(cx, JS_NewPlainObject(cx));
      if (!created) return fail(WasmOutcome::Kind::kError);
      ns.setObject(*created);
      if (!JS_SetProperty(cx, import_object, imp.module.c_str(), ns)) return fail(WasmOutcome::Kind::kError);
    }
    JS::RootedObject ns_obj(cx, &ns.toObject());
    HostImportFn fn = imp.fn;
    const unsigned nargs = imp.nargs;
    JSObject* f = engine.NewHostFunction(imp.name.c_str(), nargs, [state, fn, nargs](JSContext* cx, JS::CallArgs& args) {
      uint64_t values[16] = {};
      const unsigned n = std::min<unsigned>(nargs, 16);
      for (unsigned i = 0; i < n; ++i) {
        JS::HandleValue v = args.get(i);
        if (v.isBigInt()) {
          values[i] = static_cast<uint64_t>(JS::ToBigInt64(v.toBigInt()));
        } else if (v.isInt32()) {
          values[i] = static_cast<uint32_t>(v.toInt32());
        } else if (v.isNumber()) {
          values[i] = static_cast<uint32_t>(static_cast<int64_t>(v.toNumber()));
        }
      }
      HostResult r = fn(CurrentMemory(cx, *state), std::span<const uint64_t>(values, n));
      if (r.exit) {
        state->exited = true;
        state->exit_code = r.value;
        return false;  // no exception pending: an uncatchable stop
      }
      if (!r.error.empty()) {
        JS_ReportErrorUTF8(cx, "%s", r.error.c_str());
        return false;
      }
      args.rval().setInt32(r.value);
      return true;
    });
    if (!f) return fail(WasmOutcome::Kind::kError);
    JS::RootedValue fv(cx, JS::ObjectValue(*f));
    if (!JS_DefineProperty(cx, ns_obj, imp.name.c_str(), fv, JSPROP_READONLY | JSPROP_PERMANENT | JSPROP_ENUMERATE)) {
      return fail(WasmOutcome::Kind::kError);
    }
  }

  // Compile, link and instantiate.
  JS::RootedValue glue(cx);
  if (!engine.EvaluateScript(kGlue, "airlock-wasm", 1, &glue) || !glue.isObject()) {
    return fail(WasmOutcome::Kind::kError);
  }
  JS::RootedValueArray<3> glue_args(cx);
  if (bytes) glue_args[0].setObject(*bytes);
  if (compiled) glue_args[1].setObject(*compiled);
  glue_args[2].setObject(*import_object);
  JS::RootedValue result(cx);
  const bool ok = JS_CallFunctionValue(cx, nullptr, glue, glue_args, &result);
  if (state->exited) {  // proc_exit from a start section
    JS_ClearPendingException(cx);
    failure->kind = WasmOutcome::Kind::kExited;
    failure->exit_code = state->exit_code;
    return nullptr;
  }
  if (!ok || !result.isObject()) return fail(WasmOutcome::Kind::kInvalid);
  JS::RootedObject instance_obj(cx, &result.toObject());
  JS::RootedValue exports(cx);
  if (!JS_GetProperty(cx, instance_obj, "exports", &exports) || !exports.isObject()) {
    return fail(WasmOutcome::Kind::kInvalid);
  }
  state->exports = &exports.toObject();
  JS::RootedValue memory(cx);
  if (!JS_GetProperty(cx, state->exports, "memory", &memory)) return fail(WasmOutcome::Kind::kError);
  if (memory.isObject()) state->memory = &memory.toObject();
  return instance;
}

namespace {

bool IsFunction(JS::HandleValue v) { return v.isObject() && JS_ObjectIsFunction(&v.toObject()); }

}  // namespace

bool WasmInstance::HasFunction(const char* name) {
  JSContext* cx = engine_.cx();
  JS::RootedValue f(cx);
  if (!JS_GetProperty(cx, state_->exports, name, &f)) {
    JS_ClearPendingException(cx);
    return false;
  }
  return IsFunction(f);
}

std::span<uint8_t> WasmInstance::Memory() { return CurrentMemory(engine_.cx(), *state_); }

bool WasmInstance::GrowMemoryTo(uint64_t bytes) {
  constexpr uint64_t kPage = 64 * 1024;
  JSContext* cx = engine_.cx();
  const uint64_t have = Memory().size();
  if (!state_->memory) return false;
  if (bytes <= have) return true;
  const uint64_t pages = (bytes - have + kPage - 1) / kPage;
  if (pages > 65536) return false;
  JS::RootedValueArray<1> argv(cx);
  argv[0].setInt32(static_cast<int32_t>(pages));
  JS::RootedValue rval(cx);
  if (!JS_CallFunctionName(cx, state_->memory, "grow", argv, &rval)) {
    JS_ClearPendingException(cx);
    return false;
  }
  return Memory().size() >= bytes;
}

std::optional<int32_t> WasmInstance::GlobalI32(const char* name) {
  JSContext* cx = engine_.cx();
  JS::RootedValue g(cx);
  if (!JS_GetProperty(cx, state_->exports, name, &g) || !g.isObject()) {
    JS_ClearPendingException(cx);
    return std::nullopt;
  }
  JS::RootedObject global(cx, &g.toObject());
  JS::RootedValue v(cx);
  if (!JS_GetProperty(cx, global, "value", &v) || !v.isInt32()) {
    JS_ClearPendingException(cx);
    return std::nullopt;
  }
  return v.toInt32();
}

bool WasmInstance::SetGlobalI32(const char* name, int32_t value) {
  JSContext* cx = engine_.cx();
  JS::RootedValue g(cx);
  if (!JS_GetProperty(cx, state_->exports, name, &g) || !g.isObject()) {
    JS_ClearPendingException(cx);
    return false;
  }
  JS::RootedObject global(cx, &g.toObject());
  JS::RootedValue v(cx, JS::Int32Value(value));
  if (!JS_SetProperty(cx, global, "value", v)) {  // throws for an immutable global
    JS_ClearPendingException(cx);
    return false;
  }
  return GlobalI32(name) == value;
}

WasmOutcome WasmInstance::Call(const char* name, std::span<const int32_t> args, int32_t* result) {
  JSContext* cx = engine_.cx();
  if (result != nullptr) *result = 0;
  JS::RootedValue f(cx);
  if (!JS_GetProperty(cx, state_->exports, name, &f)) return Failure(engine_, WasmOutcome::Kind::kError);
  if (!IsFunction(f)) {
    WasmOutcome out;
    out.kind = WasmOutcome::Kind::kInvalid;
    out.message = std::string("the module exports no function \"") + name + "\"";
    return out;
  }
  JS::RootedValueVector argv(cx);
  for (int32_t a : args) {
    if (!argv.append(JS::Int32Value(a))) return Failure(engine_, WasmOutcome::Kind::kError);
  }
  JS::RootedValue rval(cx);
  const bool ok = JS_CallFunctionValue(cx, nullptr, f, argv, &rval);
  if (state_->exited) {
    JS_ClearPendingException(cx);
    WasmOutcome out;
    out.kind = WasmOutcome::Kind::kExited;
    out.exit_code = state_->exit_code;
    return out;
  }
  if (!ok) return Failure(engine_, WasmOutcome::Kind::kError);
  if (result != nullptr && rval.isInt32()) *result = rval.toInt32();
  WasmOutcome out;
  out.kind = WasmOutcome::Kind::kReturned;
  return out;
}

WasmOutcome RunWasmCommand(JsEngine& engine, std::string_view module_bytes, const std::vector<HostImport>& imports,
                           const char* entry, JS::HandleObject compiled) {
  WasmOutcome failure;
  std::unique_ptr<WasmInstance> instance = WasmInstance::Create(engine, module_bytes, imports, &failure, compiled);
  if (!instance) return failure;
  WasmOutcome out = instance->Call(entry, {});
  out.memory_bytes = instance->Memory().size();
  return out;
}

}  // namespace airlock::engine::js
