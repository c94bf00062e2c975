// A content-addressed, size-bounded, on-disk cache of build outputs.
//
// C and C++ programs are compiled inside the jail before they run. The same
// program is often submitted many times (retries, agents iterating on stdin or
// arguments), and a compile costs tens to hundreds of milliseconds (C++ with
// the standard library: several hundred). BuildCache lets the executor skip
// the compiler when it has already built exactly these inputs:
//
//   BuildKeyInput in{.language = "cpp", .isolation = "native",
//                    .compile_argv = spec.compile->argv,
//                    .compiler_version = "g++ (Debian 12.2.0-14) 12.2.0",
//                    .files = {{"main.cc", code}, {"util.h", header}}};
//   std::string key = BuildKey(in);
//   if (std::optional<std::string> bin = cache->Get(key)) {
//     // write *bin to /work/main and run it; no compile step
//   } else {
//     // compile in the jail as usual, then:
//     (void)cache->Put(key, binary_bytes);   // a failed Put is only a miss later
//   }
//
// Trade-offs and why this is safe:
//  * A hit skips the compiler entirely: no jail spawn for the compile step,
//    no compile CPU time. A miss costs one SHA-256 over the inputs and a
//    failed open().
//  * The cache holds the outputs of untrusted source. That is harmless: the
//    key covers every input the compiler could read (the source, every file
//    present in /work at compile time since `#include "x.h"` can read it, the
//    exact argv, the compiler's version, the language and the isolation
//    tier), so a program only ever receives the binary its own exact inputs
//    produced; a fresh compile would have produced the same thing. The bytes
//    are executed only inside a jail, exactly like a fresh build. A program
//    cannot pick a key: keys are derived by the server, validated as 64 hex
//    characters, and are the only thing a path is ever built from.
//  * The compiler version string must change whenever the toolchain does
//    (e.g. the first line of `gcc --version` plus anything else that changes
//    the output, such as system headers). Stale entries of an old toolchain
//    are never hit again and age out through LRU eviction.
//  * Disk use is bounded by Options::max_bytes (counted as on-disk file size,
//    header included); least-recently-used entries are evicted on Put. An
//    entry larger than max_entry_bytes (or than max_bytes) is refused.
//    max_bytes == 0 disables the cache: Open touches nothing, Get always
//    misses, Put does nothing.
//  * Entries are written to a temporary file and renamed into place, so a
//    reader (in this or another process sharing the directory) never sees a
//    partial file. Each file carries a header with its key, the payload size
//    and the payload's SHA-256; a read that does not match (torn by a crash —
//    writes are not fsync'ed —, truncated, bit-rotted, or renamed) is a miss
//    and the file is removed.
//  * Several processes may share one directory. Each process bounds the
//    entries it knows about (those present when it opened the directory, those
//    it wrote, and those it read); entries another process writes later are
//    adopted on first Get. So with N long-lived processes the directory can
//    reach about N * max_bytes in the worst case. Reopening recomputes the
//    total from the directory.
//
// Thread-safe: any number of threads may call Get and Put concurrently. File
// I/O happens outside the internal lock; only index updates, renames and
// evictions are serialized.
#ifndef AIRLOCK_RUNTIMES_BUILD_CACHE_H_
#define AIRLOCK_RUNTIMES_BUILD_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock::runtimes {

// Everything that can influence a build's output.
struct BuildKeyInput {
  std::string language;   // e.g. "c", "cpp"
  std::string isolation;  // tier, e.g. "native", "wasm"
  std::vector<std::string> compile_argv;  // exact argv, order matters
  std::string compiler_version;           // changes whenever the toolchain does
  // (name, content) of the source AND every other file present in the work
  // directory at compile time. Order does not matter.
  std::vector<std::pair<std::string, std::string>> files;
};

// Lower-case hex SHA-256 (64 characters) over an unambiguous encoding of `in`:
// every field is length-prefixed, argv keeps its order, files are sorted by
// (name, content). Any change to any field changes the key.
std::string BuildKey(const BuildKeyInput& in);

// True if `key` is exactly 64 lower-case hex characters.
bool IsValidBuildKey(std::string_view key);

// What identifies the toolchain a compile step uses: the compiler binary
// (size, mtime) and the package database's mtime, so that any package
// change (compiler, system headers, libraries) gives new keys. "" when the
// compiler cannot be stat'ed.
std::string ToolchainIdentity(const std::string& compiler);

class BuildCache {
 public:
  struct Options {
    std::string dir;                       // created 0700 if missing
    uint64_t max_bytes = 256u << 20;       // 0 disables the cache
    uint64_t max_entry_bytes = 64u << 20;  // larger artifacts are refused
  };

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t puts = 0;
    uint64_t evictions = 0;
    uint64_t corrupt = 0;  // entries found damaged on read and removed
  };

  // Opens (creating if needed, mode 0700) the cache directory. Fails if the
  // path is not a directory, is a symlink, or is owned by another user. A
  // directory with group/other permissions is tightened to 0700. Entries
  // already present are indexed (recency from their mtime); leftover temporary
  // files older than ten minutes are removed; if the total exceeds max_bytes
  // the oldest entries are evicted.
  static StatusOr<std::unique_ptr<BuildCache>> Open(Options options);

  ~BuildCache();
  BuildCache(const BuildCache&) = delete;
  BuildCache& operator=(const BuildCache&) = delete;

  bool enabled() const { return options_.max_bytes > 0; }

  // The artifact stored under `key`, or nullopt on a miss (including an
  // invalid key, a disabled cache, or a damaged entry, which is removed).
  // A hit makes the entry the most recently used (and refreshes its mtime so
  // the order survives a reopen).
  std::optional<std::string> Get(const std::string& key);

  // Stores `artifact` under `key`, replacing any previous entry, then evicts
  // least-recently-used entries until the total is <= max_bytes. Returns
  // InvalidArgument for a bad key, ResourceExhausted for an artifact larger
  // than max_entry_bytes or max_bytes, and OK without doing anything when the
  // cache is disabled.
  Status Put(const std::string& key, std::string_view artifact);

  // On-disk bytes and number of entries this process knows about.
  uint64_t total_bytes() const;
  size_t entries() const;
  Stats stats() const;

 private:
  struct Entry {
    uint64_t bytes = 0;
    std::list<std::string>::iterator lru;  // position in lru_ (front = newest)
  };

  BuildCache(Options options, UniqueFd dir);

  Status Scan();
  // Requires mu_. Makes `key` (of `bytes` on disk) the most recent entry.
  void TouchLocked(const std::string& key, uint64_t bytes);
  // Requires mu_. Drops `key` from the index (not from disk).
  void ForgetLocked(const std::string& key);
  // Requires mu_. Evicts the oldest entries other than `keep` until the total
  // is <= max_bytes.
  void EvictLocked(const std::string& keep);
  // Requires mu_. Removes `key` from disk if it is still the file open as
  // `fd` (so a newer entry renamed over it is kept), and from the index.
  void RemoveIfSameLocked(const std::string& key, int fd);

  const Options options_;
  const UniqueFd dir_;  // O_DIRECTORY; every path is relative to it
  std::atomic<uint64_t> temp_counter_{0};

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> index_;
  std::list<std::string> lru_;
  uint64_t total_bytes_ = 0;
  Stats stats_;
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_BUILD_CACHE_H_
