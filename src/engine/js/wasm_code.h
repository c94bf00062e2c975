// Compiled WebAssembly code that outlives a process: SpiderMonkey's
// "optimized encoding" of a module (its Ion machine code and link data), the
// engine's own format for a code cache.
//
// Every WASM-tier interpreter process used to compile its module afresh:
// CPython's 20 MB module costs about 0.15 s of CPU with the baseline
// compiler, most of what making a pooled WASM CPython costs. With a code
// cache the module is compiled once, by Ion, and each process loads the
// machine code instead (a copy and a relocation, a few milliseconds).
//
//   // Writing (once, outside any jail: airlock-js --wasm-code-cache):
//   StatusOr<std::string> enc = EncodeWasmModule(engine, module_bytes);
//   // Loading (every run): an encoding that does not load gives a null
//   // module and the caller compiles `module_bytes` as before.
//   JS::RootedObject module(cx);
//   if (!LoadWasmModule(engine, *enc, &module)) { ...compile from bytes... }
//
// The engine only accepts an encoding made by the same SpiderMonkey build on
// the same kind of CPU (WasmCodeBuildId); the file that carries it
// (wasm/code_cache_file.h) records that id and the module it was made from.
//
// An encoding is machine code that runs unchecked: only ever load one the
// runner itself wrote (root-owned, not writable by anyone else).
#ifndef AIRLOCK_ENGINE_JS_WASM_CODE_H_
#define AIRLOCK_ENGINE_JS_WASM_CODE_H_

#include <jsapi.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/js/js_engine.h"

namespace airlock::engine::js {

// Lets WebAssembly.compileStreaming reach the two functions below. Must run
// before the realm's standard classes exist (JsEngine::Init does it for an
// engine with WebAssembly enabled): SpiderMonkey leaves compileStreaming off
// the WebAssembly object of a context without a stream callback.
void InstallWasmStreaming(JSContext* cx);

// SpiderMonkey's id for "code made here runs here": its build id and the
// CPU's features. Empty if the engine does not say.
std::string WasmCodeBuildId();

// Compiles `module_bytes` with Ion alone and returns its optimized encoding.
// Fails if the module does not compile or the engine will not serialize it.
StatusOr<std::string> EncodeWasmModule(JsEngine& engine, std::string_view module_bytes);

// Turns an encoding back into a WebAssembly.Module object. False (and no
// exception pending) if the engine rejects it; the caller then compiles.
bool LoadWasmModule(JsEngine& engine, std::string_view encoding, JS::MutableHandleObject module);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_WASM_CODE_H_
