// Runs a WebAssembly command module (a WASI program's `_start`) in a JsEngine
// created with EngineOptions::enable_wasm — the core of the WASM tier.
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
// Limits come from the engine and the module: the wall-clock deadline stops
// wasm loops through the engine's interrupt callback; deep recursion and
// traps end the run with kTrap and the engine's message; the module's memory
// maximum (cap it first with wasm::CapMemory) makes memory.grow fail.
#ifndef AIRLOCK_ENGINE_JS_WASM_COMMAND_H_
#define AIRLOCK_ENGINE_JS_WASM_COMMAND_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/js/js_engine.h"

namespace airlock::engine::js {

struct HostResult {
  bool exit = false;   // stop the program now (proc_exit); `value` is the exit code
  int32_t value = 0;   // the i32 result (ignored for void imports)

  static HostResult Value(int32_t v) { return {false, v}; }
  static HostResult Exit(int32_t code) { return {true, code}; }
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
};

const char* WasmOutcomeName(WasmOutcome::Kind kind);

WasmOutcome RunWasmCommand(JsEngine& engine, std::string_view module_bytes, const std::vector<HostImport>& imports,
                           const char* entry = "_start");

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_WASM_COMMAND_H_
