// Runs a WebAssembly command module (a WASI program's `_start`) in a JsEngine
// created with EngineOptions::enable_wasm — the core of the WASM tier — or
// drives a reactor module (WasmInstance: instantiate once, then call several
// exports with i32 arguments and read or write its memory between calls).
//
// The module may import only the host functions given here (anything else is
// a link error before a single instruction runs). Each host function is C++:
// it gets the module's current linear memory (re-read on every call, since
// memory.grow replaces the buffer) and its integer arguments, and returns an
// i32 or asks the program to stop (WASI proc_exit).
//
//   std::vector<HostImport> imports = {{"wasi_snapshot_preview1", "fd_write", 4,
//       [&](std::span<uint8_t> mem, std::span<const uint64_t> a) { return HostResult::Value(...); }}};
//   WasmOutcome r = RunWasmCommand(engine, module_bytes, imports);
//   if (r.kind == WasmOutcome::Kind::kExited) return r.exit_code;
//
// A reactor (e.g. ruby.wasm: _initialize, then its own exported API):
//
//   WasmOutcome failure;
//   std::unique_ptr<WasmInstance> inst = WasmInstance::Create(engine, module_bytes, imports, &failure);
//   if (!inst) return failure;
//   int32_t ptr = 0;
//   WasmOutcome r = inst->Call("cabi_realloc", {{0, 0, 1, 16}}, &ptr);
//   if (r.kind != WasmOutcome::Kind::kReturned) return r;  // trap, exit, deadline, ...
//   std::memcpy(inst->Memory().data() + ptr, "hello", 5);   // bounds-check first
//
// Limits come from the engine and the module: the wall-clock deadline stops
// wasm loops through the engine's interrupt callback; deep recursion and
// traps end the run with kTrap and the engine's message; the module's memory
// maximum (cap it first with wasm::CapMemory) makes memory.grow fail.
#ifndef AIRLOCK_ENGINE_JS_WASM_COMMAND_H_
#define AIRLOCK_ENGINE_JS_WASM_COMMAND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/js/js_engine.h"

namespace airlock::engine::js {

struct HostResult {
  bool exit = false;   // stop the program now (proc_exit); `value` is the exit code
  int32_t value = 0;   // the i32 result (ignored for void imports)
  std::string error;   // non-empty: fail the call with this message (WasmOutcome kError)

  static HostResult Value(int32_t v) { return {false, v, {}}; }
  static HostResult Exit(int32_t code) { return {true, code, {}}; }
  static HostResult Fail(std::string message) { return {false, 0, std::move(message)}; }
};

// Arguments: i32 zero-extended to 64 bits, i64 as its two's-complement bits.
using HostImportFn = std::function<HostResult(std::span<uint8_t> memory, std::span<const uint64_t> args)>;

struct HostImport {
  std::string module;  // "wasi_snapshot_preview1"
  std::string name;    // "fd_write"
  unsigned nargs = 0;
  HostImportFn fn;
};

struct WasmOutcome {
  enum class Kind {
    kReturned,      // the entry point returned (exit code 0)
    kExited,        // a host function asked to stop (proc_exit): exit_code
    kTrap,          // a WebAssembly trap or stack exhaustion: message
    kDeadline,      // the engine's deadline stopped it
    kOutOfMemory,   // the engine ran out of memory
    kInvalid,       // the module does not compile, link or has no entry point: message
    kError,         // anything else (a host function threw): message
  };
  Kind kind = Kind::kError;
  int32_t exit_code = 0;
  std::string message;
  // The guest's linear memory when it stopped (RunWasmCommand and the Ruby
  // driver set it; 0: unknown).
  uint64_t memory_bytes = 0;
};

const char* WasmOutcomeName(WasmOutcome::Kind kind);

// One instantiated module. It keeps GC roots in the engine's context, so it
// must be destroyed before the engine; the host functions it registered (and
// whatever they capture) live as long as the engine.
class WasmInstance {
 public:
  // Compiles, links and instantiates `module_bytes` with `imports` (and runs
  // its start section, if any). On failure returns null and sets `*failure`
  // (kInvalid for a module that does not compile or link). `compiled`, if
  // not null, is these bytes' WebAssembly.Module already (wasm_code.h
  // LoadWasmModule): it is instantiated and `module_bytes` is not used.
  static std::unique_ptr<WasmInstance> Create(JsEngine& engine, std::string_view module_bytes,
                                              const std::vector<HostImport>& imports, WasmOutcome* failure,
                                              JS::HandleObject compiled = nullptr);
  ~WasmInstance();
  WasmInstance(const WasmInstance&) = delete;
  WasmInstance& operator=(const WasmInstance&) = delete;

  // Whether the module exports a function `name`.
  bool HasFunction(const char* name);

  // Calls the exported function `name` with i32 arguments. kReturned when it
  // returns (its i32 result, 0 for none, in `*result` if given); kExited when
  // a host function stopped it (proc_exit); otherwise why it failed (kInvalid
  // when there is no such export). After kExited, kTrap, kDeadline or
  // kOutOfMemory the instance must not be called again.
  WasmOutcome Call(const char* name, std::span<const int32_t> args, int32_t* result = nullptr);

  // The module's exported linear memory as it is now (empty without one).
  // Any call may grow and so move it: fetch it again after every Call.
  std::span<uint8_t> Memory();

  // Grows the exported memory to at least `bytes` (memory.grow; whole
  // 64 KiB pages). False when the module's maximum or the engine refuses.
  bool GrowMemoryTo(uint64_t bytes);

  // An exported i32 global (WebAssembly.Global) `name`: its value, or
  // nullopt when there is none; SetGlobalI32 is false for a missing or
  // immutable one.
  std::optional<int32_t> GlobalI32(const char* name);
  bool SetGlobalI32(const char* name, int32_t value);

  struct State;  // shared with the host functions (wasm_command.cc)

 private:
  WasmInstance(JsEngine& engine, std::shared_ptr<State> state);

  JsEngine& engine_;
  std::shared_ptr<State> state_;
};

// Instantiates the module (`compiled` if not null: WasmInstance::Create) and
// calls `entry` with no arguments.
WasmOutcome RunWasmCommand(JsEngine& engine, std::string_view module_bytes, const std::vector<HostImport>& imports,
                           const char* entry = "_start", JS::HandleObject compiled = nullptr);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_WASM_COMMAND_H_
