// The `console` global: log/info/debug write to stdout, warn/error to stderr.
//
// Each call writes one line: the arguments formatted and joined by spaces.
// Strings print as they are; Error objects as "Name: message" plus their
// stack; other objects and arrays as JSON (the engine's own serializer),
// falling back to String(value) when that fails (cycles, BigInt); undefined,
// functions and symbols as String(value). Output goes straight to the file
// descriptors with write(2) — never through the bridge.
//
// `max_bytes` caps the total bytes written by the console (both streams
// together); past it one marker line is written and the rest is dropped, so
// a chatty program keeps running.
#ifndef AIRLOCK_ENGINE_JS_JS_CONSOLE_H_
#define AIRLOCK_ENGINE_JS_JS_CONSOLE_H_

#include <cstdint>

#include "base/status.h"
#include "engine/js/js_engine.h"

namespace airlock::engine::js {

struct ConsoleOptions {
  int stdout_fd = 1;
  int stderr_fd = 2;
  uint64_t max_bytes = 0;  // 0: unlimited
};

inline constexpr char kConsoleTruncatedMarker[] = "[airlock: console output truncated]\n";

// Defines `console` on the engine's global. Like in browsers and Node, the
// program may replace console or its methods (it only hurts itself).
Status InstallConsole(JsEngine& engine, const ConsoleOptions& options);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_JS_CONSOLE_H_
