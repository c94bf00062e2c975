// An index of a tar archive, so that loading it need not read its headers.
//
// LoadTar (tar_reader.h) walks every header of the archive: for CPython's
// standard library with its bytecode that is 2 000 headers spread over
// 23 MB, each in a page of its own, which cost a WASM-tier start about 3 ms
// of CPU more than the data it needs. An index lists each entry's kind,
// cleaned path and where its bytes lie, in one small file; loading from it
// touches only the index, and a file's pages when the guest reads them.
//
// The runner's store (runtimes/wasm_code_store.h) writes the index once, in
// code_cache_file.h's format keyed by the archive file's size, mtime and
// inode (TarIndexKeyFor); `airlock-js --wasi ... --tar ARCHIVE=DIR
// --tar-index OUT` uses it when the
// key matches and walks the archive otherwise. The index is still checked
// entry by entry before anything is created (kinds, bounds, paths cleaned
// as LoadTar cleans them): a damaged one is an error, and the caller then
// walks the archive.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::string index, EncodeTarIndex(archive));
//   ...
//   StatusOr<std::vector<TarEntry>> entries = DecodeTarIndex(archive, index);
//   StatusOr<TarStats> st = entries.ok() ? LoadTarEntries(archive, *entries, vfs, dir, options)
//                                        : LoadTar(archive, vfs, dir, options);
#ifndef AIRLOCK_WASM_TAR_INDEX_H_
#define AIRLOCK_WASM_TAR_INDEX_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "wasm/code_cache_file.h"
#include "wasm/tar_reader.h"
#include "wasm/vfs.h"

namespace airlock::wasm {

// The key of `archive_path`'s index: its size, mtime and inode, and the
// index format's name in place of an engine build id.
StatusOr<CodeCacheKey> TarIndexKeyFor(const std::string& archive_path);

// Walks `archive` (every check LoadTar makes) and returns its index.
StatusOr<std::string> EncodeTarIndex(std::string_view archive);

// The entries `index` lists, each checked against `archive` (kind, bounds,
// a path as LoadTar's walk cleans it). InvalidArgument if any is not.
StatusOr<std::vector<TarEntry>> DecodeTarIndex(std::string_view archive, std::string_view index);

// Creates `entries` (DecodeTarIndex's) under `dest`, as LoadTar would.
StatusOr<TarStats> LoadTarEntries(std::string_view archive, const std::vector<TarEntry>& entries, Vfs& vfs,
                                  const NodePtr& dest, TarOptions options = {});

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_TAR_INDEX_H_
