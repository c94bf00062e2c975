// SpiderMonkey's self-hosted code, parsed once per machine instead of once
// per process.
//
// Part of SpiderMonkey's standard library is written in JavaScript
// (Array.prototype.sort, String.prototype.replace, the TypedArray and Intl
// helpers, ...). Every context parses and compiles that code when it starts
// (JS::InitSelfHostedCode): about 8 of the ~20 ms of CPU an airlock-js start
// cost before it ran a line, in every WASM-tier run and every code-mode
// engine. SpiderMonkey can encode the result (a stencil) and start from the
// encoding instead, as Firefox's content processes do:
//
//   airlock-js --self-hosted-cache-write FILE          once, by the runner
//   airlock-js --self-hosted-cache FILE --wasi ...     every start after
//
// The file has wasm/code_cache_file.h's format, keyed by the engine build
// alone (WasmCodeBuildId). A missing, stale or foreign file means the engine
// parses as before; SpiderMonkey also checks the encoding's own build id
// and parses when it does not decode. The encoding is engine bytecode,
// trusted as the engine binary is: the runner passes only a file its own
// writer made, owned by its user and writable by no one else
// (runtimes/wasm_code_store.h).
#ifndef AIRLOCK_ENGINE_JS_SELF_HOSTED_CACHE_H_
#define AIRLOCK_ENGINE_JS_SELF_HOSTED_CACHE_H_

#include <string>

#include "base/status.h"
#include "engine/js/js_engine.h"
#include "wasm/code_cache_file.h"

namespace airlock::engine::js {

// The key of a self-hosted cache file: this engine build. Empty build id if
// the engine gives none (then no file ever matches).
wasm::CodeCacheKey SelfHostedCacheKey();

// The cache at `path` mapped, if it is whole and made by this engine build.
// The mapping must outlive the engine (JS_ShutDown).
StatusOr<wasm::MappedCode> MapSelfHostedCache(const std::string& path);

// `airlock-js --self-hosted-cache-write OUT`: starts an engine, which
// parses the self-hosted code, and writes its encoding to OUT (a file that
// already matches is kept). Runs no script. Exit 0 when OUT is up to date.
int SelfHostedCacheMain(int argc, char** argv);

// `airlock-js [--self-hosted-cache FILE] --self-hosted-status`: starts an
// engine as every mode does and prints "decoded" if it started from FILE,
// "parsed" if it parsed its self-hosted code (no FILE, or one it could not
// use). Exit 0. For tests and operators.
int SelfHostedStatusMain(int argc, char** argv, const EngineOptions& base);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_SELF_HOSTED_CACHE_H_
