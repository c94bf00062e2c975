// PchCache: precompiled standard-library headers for the native C++ compile
// step, built once per toolchain and bound read-only into every jail.
//
// A C++ hello world spends most of its compile parsing <iostream> (about
// 30 000 lines); a precompiled header replaces that with a few mmap'ed pages.
// For a compile step whose language has a PchSpec, the executor asks
//
//   std::vector<std::string> extra = pch.ArgsFor(spec, source);
//   // e.g. {"-include", "/opt/airlock/pch/<toolchain>/iostream.h"}
//
// and inserts the arguments after the compiler's name. The rule that keeps
// this invisible to the program: a header is used only when the program's
// first line that is not blank or a comment is exactly `#include <H>` for a
// header H in the spec. `-include` then processes H before the program's
// first line, which includes H again and finds its include guard: the
// translation unit is token for token the program's own. Anything before the
// first include (a #define, a #pragma) and the header is not used.
//
// Building: the first time a header is asked for (or Prepare names it), a
// background thread runs the compiler on the host, outside any jail, at the
// lowest CPU priority, with a clean environment, on a one-line file
// `#include <H>` that airlock writes itself: no input a program controls
// reaches it. The result is renamed into place, so a reader never sees half
// a file. Until it exists runs compile without it; if it is ever unusable
// (a toolchain upgrade in place), g++ ignores an invalid .gch and parses the
// header: correctness never depends on the cache.
//
// Layout: <dir>/<toolchain key>/<name>.h and <name>.h.gch, where the key is
// a hash of the compiler's identity (binary size and mtime, the package
// database's mtime) and the PCH flags, so a package change gives a new
// directory. <dir> is bound at jail_dir (kJailPchDir) in every jail of a
// language with a PchSpec; the directory must exist before jails are made
// (the constructor creates it).
//
// Thread-safe. The destructor stops the builder (killing a compiler still
// running) and joins it.
#ifndef AIRLOCK_RUNTIMES_PCH_CACHE_H_
#define AIRLOCK_RUNTIMES_PCH_CACHE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "runtimes/host_tool_queue.h"
#include "runtimes/language.h"

namespace airlock::runtimes {

// Where PchCache's directory appears inside the jail.
inline constexpr char kJailPchDir[] = "/opt/airlock/pch";

// The header a source's first line includes (`#include <H>` after blank
// lines and comments only), or "" when its first line is anything else.
std::string FirstSystemInclude(std::string_view source);

class PchCache {
 public:
  // Creates `dir` (0755) if needed. Fails if it cannot.
  static StatusOr<std::unique_ptr<PchCache>> Open(const std::string& dir);
  ~PchCache();
  PchCache(const PchCache&) = delete;
  PchCache& operator=(const PchCache&) = delete;

  const std::string& dir() const { return dir_; }

  // The arguments that make `spec`'s compile step use a precompiled header
  // for `source`, or none (no PchSpec, no matching header, not built yet;
  // then a build is queued).
  std::vector<std::string> ArgsFor(const LanguageSpec& spec, std::string_view source);

  // Queues builds of every header of `spec` not built yet (warming).
  void Prepare(const LanguageSpec& spec);

  // Waits until no build is queued or running (tests, benchmarks).
  void WaitIdle();

  struct Stats {
    uint64_t built = 0;
    uint64_t failed = 0;
    uint64_t used = 0;  // compile steps given a header
  };
  Stats stats() const;

 private:
  explicit PchCache(std::string dir);
  struct Job {
    std::vector<std::string> argv;  // compiler and flags
    std::string key_dir;            // host directory of the toolchain key
    std::string header;             // e.g. "iostream"
  };
  // <dir>/<key> for `spec` (the key hashes the toolchain and the flags), or
  // "" when the compiler cannot be identified.
  std::string KeyDir(const LanguageSpec& spec);
  void Enqueue(Job job);
  Status Build(const Job& job);  // on the queue's thread

  const std::string dir_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> key_dirs_;  // by compiler and flags
  uint64_t used_ = 0;
  // Last: its thread runs Build, which uses the members above; destroyed
  // (the compiler killed, the thread joined) first.
  HostToolQueue builds_;
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_PCH_CACHE_H_
