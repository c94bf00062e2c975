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
#include <memory>
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

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_TAR_READER_H_
