// The file that carries a module's compiled code (engine/js/wasm_code.h)
// between processes: `airlock-js --wasm-code-cache` writes it once, and every WASM-tier
// process started with `--code-cache FILE` maps it instead of compiling.
//
// The file says what it was made from and by what, and a reader uses it only
// when all of it matches:
//   * the engine's code build id (engine/js/wasm_code.h WasmCodeBuildId: the
//     libmozjs build and the CPU's features), so an upgraded engine or
//     another CPU compiles afresh;
//   * the module file's size, modification time and inode, so a rebuilt
//     interpreter is never run on its predecessor's code;
//   * the memory cap applied to the module (wasm::CapMemory), which is part
//     of the compiled module.
// A file that does not match is ignored (the process compiles, as without
// one); it is never an error for the run.
//
//   AIRLOCK_ASSIGN_OR_RETURN(CodeCacheKey key, CodeCacheKeyFor(module_path, cap_bytes, WasmCodeBuildId()));
//   AIRLOCK_RETURN_IF_ERROR(WriteCodeCache(out_path, key, encoding));
//   StatusOr<MappedCode> code = ReadCodeCache(out_path, key);   // later, elsewhere
//   if (code.ok()) use(code->encoding());
//
// Who may write the file is the runner's concern (runtimes/wasm_code_store.h):
// it passes --code-cache only for a file it wrote, owned by its user and
// writable by no one else, because the code in it runs without
// WebAssembly's checks. This file knows nothing of the engine.
#ifndef AIRLOCK_WASM_CODE_CACHE_FILE_H_
#define AIRLOCK_WASM_CODE_CACHE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace airlock::wasm {

struct CodeCacheKey {
  std::string build_id;
  uint64_t module_size = 0;
  int64_t module_mtime_ns = 0;
  uint64_t module_inode = 0;
  uint64_t memory_cap_bytes = 0;
};

// The format's numbers: 8 bytes, little-endian. GetU64 consumes them from
// the front of `in`; false if fewer than 8 bytes are left. For payloads in
// this format that carry numbers of their own (tar_index.h).
void PutU64(std::string& out, uint64_t v);
bool GetU64(std::string_view& in, uint64_t* v);

// The key of the module file at `module_path` (stat) capped at `cap_bytes`.
StatusOr<CodeCacheKey> CodeCacheKeyFor(const std::string& module_path, uint64_t cap_bytes, std::string build_id);

// Writes `encoding` under `key` to `path` (a temporary file beside it, then
// rename: readers see the old file or the new one). Mode 0644.
Status WriteCodeCache(const std::string& path, const CodeCacheKey& key, std::string_view encoding);

// Removes the temporary files WriteCodeCache leaves for `path` when its
// process is killed mid-write. Only while no writer for `path` can be at
// work (airlock-js holds the file's lock). Returns how many it removed.
int RemoveStaleWrites(const std::string& path);

// How a writer process brings `path` up to date: under `path`.lock (flock;
// runners sharing the directory take turns) it removes what a killed
// writer left (RemoveStaleWrites), keeps a file that already matches `key`
// (returns kUpToDate without calling `produce`), or writes what `produce`
// returns (kWritten).
enum class CacheUpdate { kUpToDate, kWritten };
StatusOr<CacheUpdate> UpdateCodeCache(const std::string& path, const CodeCacheKey& key,
                                      const std::function<StatusOr<std::string>()>& produce);

// A cache file mapped read-only; move-only, unmapped on destruction.
class MappedCode {
 public:
  MappedCode() = default;
  MappedCode(MappedCode&& other) noexcept;
  MappedCode& operator=(MappedCode&& other) noexcept;
  MappedCode(const MappedCode&) = delete;
  MappedCode& operator=(const MappedCode&) = delete;
  ~MappedCode();

  std::string_view encoding() const { return encoding_; }

 private:
  friend StatusOr<MappedCode> ReadCodeCache(const std::string& path, const CodeCacheKey& key);
  void* base_ = nullptr;
  size_t length_ = 0;
  std::string_view encoding_;
};

// Maps `path` and returns its encoding if the file is whole and its key is
// `key`; NotFound if there is no file, FailedPrecondition if it is for
// something else (a stale or foreign file) or not whole.
StatusOr<MappedCode> ReadCodeCache(const std::string& path, const CodeCacheKey& key);

// The key a cache file was written under (tests, diagnostics).
StatusOr<CodeCacheKey> ReadCodeCacheKey(const std::string& path);

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_CODE_CACHE_FILE_H_
