// setjmp/longjmp for the WASM tier's C and C++ (wasi-libc has none).
//
// clang-16 lowers setjmp/longjmp itself when it compiles with
// `-mexception-handling -mllvm -wasm-enable-sjlj`: a longjmp becomes a
// WebAssembly exception (the C longjmp tag) and every call that may longjmp
// out of a function that called setjmp is wrapped in a try that checks
// whether the jump is for one of its own setjmps. The engine (SpiderMonkey
// 102, ENABLE_WASM_EXCEPTIONS) runs that; what LLVM leaves to the runtime
// is a setjmp.h declaring the two names and four small helpers
// (saveSetjmp, testSetjmp, getTempRet0/setTempRet0, __wasm_longjmp), which
// are this kit: written to a host directory and compiled there once into an
// archive, bound read-only into the jail at kJailWasmSetjmpDir, and linked
// with every program (the linker takes it only into programs that call
// setjmp: others differ only in their target-features section, 20 bytes). A longjmp to a
// setjmp whose function has returned (undefined in C) ends the program with
// an uncaught-exception trap, as any trap does.
//
//   AIRLOCK_RETURN_IF_ERROR(WriteWasmSetjmpKit(dir));
//   AddWasmSetjmp(c_spec, dir);   // the WASM tier's "c" or "cpp"
#ifndef AIRLOCK_RUNTIMES_WASM_SETJMP_KIT_H_
#define AIRLOCK_RUNTIMES_WASM_SETJMP_KIT_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "runtimes/language.h"

namespace airlock::runtimes {

// Where the kit appears inside the jail.
inline constexpr char kJailWasmSetjmpDir[] = "/opt/airlock/wasm-setjmp";

// The kit's two files, include/setjmp.h and setjmp.c: src/runtimes/wasm_setjmp/,
// compiled in (cmake/embed_text.cmake).
std::string_view WasmSetjmpHeader();
std::string_view WasmSetjmpRuntime();

// A hex digest of the kit's content (names it in argv and in lib/KIT).
std::string WasmSetjmpKitId();

// Writes include/setjmp.h and setjmp.c under `dir` (directories 0755,
// files 0644, each replaced atomically when its content differs) and
// builds lib/libairlock_setjmp.a from setjmp.c with the host's clang-16 and
// llvm-ar-16 (our fixed source only, never a user's; rebuilt when lib/KIT
// names another kit). An error leaves the tier without setjmp.
Status WriteWasmSetjmpKit(const std::string& dir);

// Makes a WASM-tier C or C++ spec compile with the kit at `host_dir`: the
// lowering flags, the kit's include directory, its archive, and the
// directory bound read-only. No-op for other specs.
void AddWasmSetjmp(LanguageSpec& spec, const std::string& host_dir);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_WASM_SETJMP_KIT_H_
