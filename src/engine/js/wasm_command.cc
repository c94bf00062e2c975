#include "engine/js/wasm_command.h"

#include <js/ArrayBuffer.h>
#include <js/BigInt.h>
#include <js/CallAndConstruct.h>

#include <cstring>
#include <memory>

#include "engine/js/js_errors.h"

namespace airlock::engine::js {
namespace {

// new WebAssembly.Instance(new WebAssembly.Module(bytes), imports), from
// the engine's own copy of WebAssembly taken before any user code ran.
constexpr char kGlue[] =
    "(function (bytes, imports) {\n"
    "  return new WebAssembly.Instance(new WebAssembly.Module(bytes), imports);\n"
    "})";

// The state host functions share during one run.
struct RunState {
  JS::PersistentRootedObject memory;  // exports.memory, or null
  bool exited = false;
  int32_t exit_code = 0;
  explicit RunState(JSContext* cx) : memory(cx) {}
};

std::span<uint8_t> CurrentMemory(JSContext* cx, RunState& state) {
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

WasmOutcome RunWasmCommand(JsEngine& engine, std::string_view module_bytes, const std::vector<HostImport>& imports,
                           const char* entry) {
  JSContext* cx = engine.cx();
  auto state = std::make_shared<RunState>(cx);
  // The host functions (and so `state`) live as long as the engine; the root
  // must not outlive this run (nor the context).
  struct Unroot {
    RunState& s;
    ~Unroot() { s.memory.reset(); }
  } unroot{*state};

  // The module bytes, copied into an ArrayBuffer.
  JS::RootedObject bytes(cx, JS::NewArrayBuffer(cx, module_bytes.size()));
  if (!bytes) return Failure(engine, WasmOutcome::Kind::kError);
  {
    bool shared = false;
    JS::AutoCheckCannotGC nogc;
    std::memcpy(JS::GetArrayBufferData(bytes, &shared, nogc), module_bytes.data(), module_bytes.size());
  }

  // imports[module][name] = a host function.
  JS::RootedObject import_object(cx, JS_NewPlainObject(cx));
  if (!import_object) return Failure(engine, WasmOutcome::Kind::kError);
  for (const HostImport& imp : imports) {
    JS::RootedValue ns(cx);
    if (!JS_GetProperty(cx, import_object, imp.module.c_str(), &ns)) return Failure(engine, WasmOutcome::Kind::kError);
    if (!ns.isObject()) {
      JS::RootedObject created(cx, JS_NewPlainObject(cx));
      if (!created) return Failure(engine, WasmOutcome::Kind::kError);
      ns.setObject(*created);
      if (!JS_SetProperty(cx, import_object, imp.module.c_str(), ns)) return Failure(engine, WasmOutcome::Kind::kError);
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
      args.rval().setInt32(r.value);
      return true;
    });
    if (!f) return Failure(engine, WasmOutcome::Kind::kError);
    JS::RootedValue fv(cx, JS::ObjectValue(*f));
    if (!JS_DefineProperty(cx, ns_obj, imp.name.c_str(), fv, JSPROP_READONLY | JSPROP_PERMANENT | JSPROP_ENUMERATE)) {
      return Failure(engine, WasmOutcome::Kind::kError);
    }
  }

  // Compile, link and instantiate.
  JS::RootedValue glue(cx);
  if (!engine.EvaluateScript(kGlue, "airlock-wasm", 1, &glue) || !glue.isObject()) {
    return Failure(engine, WasmOutcome::Kind::kError);
  }
  JS::RootedValueArray<2> glue_args(cx);
  glue_args[0].setObject(*bytes);
  glue_args[1].setObject(*import_object);
  JS::RootedValue instance(cx);
  if (!JS_CallFunctionValue(cx, nullptr, glue, glue_args, &instance) || !instance.isObject()) {
    return Failure(engine, WasmOutcome::Kind::kInvalid);
  }
  JS::RootedObject instance_obj(cx, &instance.toObject());
  JS::RootedValue exports(cx);
  if (!JS_GetProperty(cx, instance_obj, "exports", &exports) || !exports.isObject()) {
    return Failure(engine, WasmOutcome::Kind::kInvalid);
  }
  JS::RootedObject exports_obj(cx, &exports.toObject());
  JS::RootedValue memory(cx);
  if (!JS_GetProperty(cx, exports_obj, "memory", &memory)) return Failure(engine, WasmOutcome::Kind::kError);
  if (memory.isObject()) state->memory = &memory.toObject();
  JS::RootedValue start(cx);
  if (!JS_GetProperty(cx, exports_obj, entry, &start)) return Failure(engine, WasmOutcome::Kind::kError);
  if (!start.isObject() || !JS_ObjectIsFunction(&start.toObject())) {
    WasmOutcome out;
    out.kind = WasmOutcome::Kind::kInvalid;
    out.message = std::string("the module exports no function \"") + entry + "\"";
    return out;
  }

  // Run.
  JS::RootedValue rval(cx);
  const bool ok = JS_CallFunctionValue(cx, nullptr, start, JS::HandleValueArray::empty(), &rval);
  if (state->exited) {
    JS_ClearPendingException(cx);
    WasmOutcome out;
    out.kind = WasmOutcome::Kind::kExited;
    out.exit_code = state->exit_code;
    return out;
  }
  if (!ok) return Failure(engine, WasmOutcome::Kind::kError);
  WasmOutcome out;
  out.kind = WasmOutcome::Kind::kReturned;
  return out;
}

}  // namespace airlock::engine::js
