// Loads a tar archive into the in-memory filesystem (vfs.h), read-only.
//
// Used for a WebAssembly runtime's packed standard library: the archive is
// parsed from memory (uncompressed ustar, GNU and pax; no gzip) and its
// directories and regular files are created under a destination directory,
// which is then marked read-only. GNU long names ('L') and pax "path="
// records are honoured; symlinks, hard links and devices are skipped (the
// VFS has none) and counted. Every header field and size is bounds-checked:
// a malformed or truncated archive is an InvalidArgument, entries escaping
// the destination ("..", absolute paths after stripping '/') are refused,
// and a VFS limit hit is a ResourceExhausted.
//
//   AIRLOCK_ASSIGN_OR_RETURN(wasm::NodePtr lib, vfs.MakeDirs("usr/lib/python3.12"));
//   AIRLOCK_ASSIGN_OR_RETURN(wasm::TarStats st, wasm::LoadTar(archive_bytes, vfs, lib));
#ifndef AIRLOCK_WASM_TAR_READER_H_
#define AIRLOCK_WASM_TAR_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "wasm/vfs.h"

namespace airlock::wasm {

struct TarStats {
  uint64_t files = 0;
  uint64_t dirs = 0;
  uint64_t skipped = 0;  // symlinks, hard links, devices, fifos
  uint64_t bytes = 0;    // regular file contents loaded
};

struct TarOptions {
  bool read_only = true;  // mark `dest` and everything loaded read-only
  // The owner of the buffer `archive` lies in (a read-only mapping of the
  // archive file, say): files then borrow their bytes from it instead of
  // copying them (Vfs::AddFile), and keep it alive.
  std::shared_ptr<const void> backing;
};

StatusOr<TarStats> LoadTar(std::string_view archive, Vfs& vfs, const NodePtr& dest,
                           TarOptions options = {});

// One entry of an archive, as LoadTar sees it: its cleaned path (no "..",
// no leading "/") and where its bytes lie in the archive.
struct TarEntry {
  enum Kind : uint8_t { kDir = 'd', kFile = 'f', kOther = 'o' } kind = kOther;  // kOther: skipped
  std::string path;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// Walks `archive`'s headers (with every check LoadTar makes) and calls
// `visit` for each entry, in order; stops at the first error.
Status ForEachTarEntry(std::string_view archive, const std::function<Status(const TarEntry&)>& visit);

// Creates `entry` (bytes at entry.offset in `archive`, which must hold
// them) under `dest`, counting it in `stats`. LoadTar's step, for indexes
// (tar_index.h).
Status AddTarEntry(std::string_view archive, const TarEntry& entry, Vfs& vfs, const NodePtr& dest,
                   const TarOptions& options, TarStats& stats);

// Strips leading "/" and "./"; refuses ".." components and NUL bytes.
StatusOr<std::string> CleanTarPath(std::string_view raw);

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_TAR_READER_H_
