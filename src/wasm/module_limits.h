// Caps the linear memory a WebAssembly module may grow to, by rewriting the
// limits of its memories in the binary before the engine compiles it.
//
// An engine enforces a memory's declared maximum on memory.grow (which then
// returns -1, as a well-behaved program expects) but has no per-instance
// knob for "at most N MiB". Writing our maximum into the module gives
// exactly that: every memory the module defines or imports gets
// max = min(declared max, limit); a memory without a maximum gets one. A
// module whose initial size is already above the limit is refused.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::string capped, wasm::CapMemory(module_bytes, 256u << 20));
//   ... compile `capped` ...
//
// Only the binary format's section framing, the import section's memory
// entries and the memory section are parsed; everything else is copied
// byte for byte. Malformed input is an InvalidArgument, never a crash.
#ifndef AIRLOCK_WASM_MODULE_LIMITS_H_
#define AIRLOCK_WASM_MODULE_LIMITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace airlock::wasm {

inline constexpr uint64_t kWasmPageBytes = 65536;

// `module` with every memory's maximum at most `max_bytes` (rounded down to
// whole 64 KiB pages, at least one page). Memory64 and shared memories are
// refused (airlock's engine runs neither).
StatusOr<std::string> CapMemory(std::string_view module, uint64_t max_bytes);

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_MODULE_LIMITS_H_
