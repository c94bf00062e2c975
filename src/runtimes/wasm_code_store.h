// WasmCodeStore: the WASM tier's interpreters compiled once, by the runner,
// instead of once per process.
//
// Every WASM-tier CPython, PHP or Ruby process used to compile its module
// (20, 7 and 30 MB) before running a line: about 0.15, 0.1 and 0.45 s of CPU,
// most of what one pre-started interpreter costs. The store has airlock-js
// compile each module once, with Ion, into a code cache file
// (wasm/code_cache_file.h); a jail started afterwards gets
// `--code-cache FILE` and loads the machine code instead (docs/wasm.md,
// "Compiled code cache").
//
//   store->Prepare("python", "/var/cache/airlock/wasm/python-3.11.../python.wasm", 448);
//   ...
//   std::string path = store->JailPath("python", 448);  // "" until written
//
// Writing: a background thread runs `airlock-js --wasm-code-cache MODULE
// FILE --wasm-max-mb HEAP` on the host, outside any jail, at the lowest CPU
// priority, with an empty environment. Its only input is the interpreter
// module the operator installed; it runs no guest code. airlock-js keeps a
// file that already matches (same module, cap and engine build) and
// replaces one that does not, under a lock, so runners sharing the
// directory do not compile twice. Until a file is written this way runs
// compile as before; a file airlock-js later finds stale is ignored by it
// (it compiles): correctness never depends on the cache.
//
// Trust: the file is machine code that runs without WebAssembly's checks
// (inside the jail, with all its layers). JailPath names a file only if
// this store's writer succeeded for it in this process, and only while the
// file and its directory belong to the runner's user and no one else may
// write them (checked at every call).
//
// The store also keeps SpiderMonkey's self-hosted code, encoded
// (engine/js/self_hosted_cache.h): every airlock-js start, in any language
// of the WASM tier or in code mode, then decodes it instead of parsing it
// (about 8 ms of CPU less per start). Written once by `airlock-js
// --self-hosted-cache-write`, trusted and named like the module code.
//
// And the index of a language's standard-library tar (wasm/tar_index.h),
// written by the store itself (it only reads the operator's archive), so
// that a start loads the archive without walking its headers.
//
// Layout: <dir>/<language>.<heap>mb.code, <dir>/self-hosted.code and
// <dir>/<language>.tar-index, bound
// read-only at kJailWasmCodeDir in the jails of the languages that use
// them; the directory must exist before those jails are made (Open
// creates it).
//
// Thread-safe. The destructor stops the writer (killing an airlock-js still
// compiling) and joins it (host_tool_queue.h).
#ifndef AIRLOCK_RUNTIMES_WASM_CODE_STORE_H_
#define AIRLOCK_RUNTIMES_WASM_CODE_STORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <functional>
#include <vector>

#include "base/status.h"
#include "runtimes/host_tool_queue.h"

namespace airlock::runtimes {

// Where WasmCodeStore's directory appears inside the jail.
inline constexpr char kJailWasmCodeDir[] = "/opt/airlock/wasm-code";

class WasmCodeStore {
 public:
  // Creates `dir` (0755) if needed; `airlock_js` is the engine that writes
  // (and later loads) the code.
  static StatusOr<std::unique_ptr<WasmCodeStore>> Open(const std::string& dir, const std::string& airlock_js);
  ~WasmCodeStore();
  WasmCodeStore(const WasmCodeStore&) = delete;
  WasmCodeStore& operator=(const WasmCodeStore&) = delete;

  const std::string& dir() const { return dir_; }

  // Queues writing the code of `module` (a host path) for `language` with
  // its memory capped at `heap_mb` (airlock-js --wasm-max-mb), once.
  void Prepare(const std::string& language, const std::string& module, uint64_t heap_mb);

  // The code's path inside the jail, or "" (not written yet, failed, or no
  // longer safe to use).
  std::string JailPath(const std::string& language, uint64_t heap_mb) const;

  // Queues writing the engine's self-hosted code, once.
  void PrepareSelfHosted();
  // Its path inside the jail, or "" (as JailPath).
  std::string SelfHostedJailPath() const;

  // Queues writing the index of `archive` (a host path) for `language`.
  void PrepareTarIndex(const std::string& language, const std::string& archive);
  // Its path inside the jail, or "" (as JailPath).
  std::string TarIndexJailPath(const std::string& language) const;

  // Waits until nothing is queued or being written (tests, benchmarks).
  void WaitIdle();

  struct Stats {
    uint64_t written = 0;  // files airlock-js wrote or found up to date
    uint64_t failed = 0;
  };
  Stats stats() const;

 private:
  WasmCodeStore(std::string dir, std::string airlock_js);
  // On the queue's thread: runs `make` (airlock-js run with an empty
  // environment, or the store's own writer) to write `file`, and records
  // it as this store's once it is safe.
  Status Write(const std::string& file, const std::function<Status()>& make);
  // `file`'s path in the jail if this store wrote it and it is safe, or "".
  std::string Named(const std::string& file) const;
  bool Safe(const std::string& file) const;

  const std::string dir_;
  const std::string airlock_js_;
  mutable std::mutex mu_;
  std::set<std::string> ready_;  // files written by this store
  // Last: its thread runs Write; destroyed (airlock-js killed, the thread
  // joined) first.
  HostToolQueue writes_;
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_WASM_CODE_STORE_H_
