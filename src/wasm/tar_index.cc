#include "wasm/tar_index.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace airlock::wasm {
namespace {

// Stands in for the engine build id in the key: the format's version.
constexpr char kTarIndexFormat[] = "airlock-tar-index-1";

}  // namespace

StatusOr<CodeCacheKey> TarIndexKeyFor(const std::string& archive_path) {
  return CodeCacheKeyFor(archive_path, 0, kTarIndexFormat);
}

StatusOr<std::string> EncodeTarIndex(std::string_view archive) {
  std::string entries;
  uint64_t count = 0;
  AIRLOCK_RETURN_IF_ERROR(ForEachTarEntry(archive, [&](const TarEntry& e) {
    entries.push_back(static_cast<char>(e.kind));
    PutU64(entries, e.offset);
    PutU64(entries, e.size);
    PutU64(entries, e.path.size());
    entries += e.path;
    ++count;
    return OkStatus();
  }));
  std::string out;
  PutU64(out, count);
  return out + entries;
}

StatusOr<std::vector<TarEntry>> DecodeTarIndex(std::string_view archive, std::string_view index) {
  uint64_t count = 0;
  if (!GetU64(index, &count) || count > index.size()) return InvalidArgument("tar index: bad entry count");
  std::vector<TarEntry> entries;
  entries.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (index.empty()) return InvalidArgument("tar index: truncated");
    TarEntry e;
    const char kind = index[0];
    index.remove_prefix(1);
    if (kind != TarEntry::kDir && kind != TarEntry::kFile && kind != TarEntry::kOther) {
      return InvalidArgument("tar index: bad entry kind");
    }
    e.kind = static_cast<TarEntry::Kind>(kind);
    uint64_t path_size = 0;
    if (!GetU64(index, &e.offset) || !GetU64(index, &e.size) || !GetU64(index, &path_size) ||
        path_size > index.size()) {
      return InvalidArgument("tar index: truncated");
    }
    if (e.offset > archive.size() || e.size > archive.size() - e.offset) {
      return InvalidArgument("tar index: an entry lies outside the archive");
    }
    const std::string_view path = index.substr(0, path_size);
    index.remove_prefix(path_size);
    AIRLOCK_ASSIGN_OR_RETURN(e.path, CleanTarPath(path));
    if (e.path != path || (e.kind == TarEntry::kFile && e.path.empty())) {
      return InvalidArgument("tar index: a path is not one the archive's walk gives");
    }
    entries.push_back(std::move(e));
  }
  if (!index.empty()) return InvalidArgument("tar index: bytes after the last entry");
  return entries;
}

StatusOr<TarStats> LoadTarEntries(std::string_view archive, const std::vector<TarEntry>& entries, Vfs& vfs,
                                  const NodePtr& dest, TarOptions options) {
  if (!dest || !dest->is_dir()) return InvalidArgument("tar: destination is not a directory");
  TarStats stats;
  for (const TarEntry& e : entries) {
    if (e.offset > archive.size() || e.size > archive.size() - e.offset) {
      return InvalidArgument("tar: an entry lies outside the archive");
    }
    AIRLOCK_RETURN_IF_ERROR(AddTarEntry(archive, e, vfs, dest, options, stats));
  }
  if (options.read_only) Vfs::SetReadOnly(dest);
  return stats;
}

}  // namespace airlock::wasm
