#include "wasm/tar_reader.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace airlock::wasm {
namespace {

constexpr size_t kBlock = 512;

std::string_view Field(std::string_view header, size_t offset, size_t len) {
  std::string_view f = header.substr(offset, len);
  size_t nul = f.find('\0');
  return nul == std::string_view::npos ? f : f.substr(0, nul);
}

// Octal (space/NUL padded) or GNU base-256 (high bit of the first byte).
std::optional<uint64_t> Number(std::string_view header, size_t offset, size_t len) {
  std::string_view f = header.substr(offset, len);
  if (!f.empty() && (static_cast<uint8_t>(f[0]) & 0x80)) {
    if (static_cast<uint8_t>(f[0]) != 0x80) return std::nullopt;  // negative or huge
    uint64_t v = 0;
    for (size_t i = 1; i < f.size(); ++i) {
      if (v >> 56) return std::nullopt;
      v = (v << 8) | static_cast<uint8_t>(f[i]);
    }
    return v;
  }
  uint64_t v = 0;
  size_t i = 0;
  while (i < f.size() && f[i] == ' ') ++i;
  bool any = false;
  for (; i < f.size() && f[i] >= '0' && f[i] <= '7'; ++i) {
    if (v >> 61) return std::nullopt;
    v = v * 8 + (f[i] - '0');
    any = true;
  }
  for (; i < f.size(); ++i) {
    if (f[i] != ' ' && f[i] != '\0') return std::nullopt;
  }
  if (!any) return uint64_t{0};
  return v;
}

bool ChecksumOk(std::string_view header) {
  std::optional<uint64_t> stored = Number(header, 148, 8);
  if (!stored) return false;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<uint8_t>(header[i]);
  }
  return sum == *stored;
}

bool AllZero(std::string_view block) {
  for (char c : block) {
    if (c != '\0') return false;
  }
  return true;
}

// The "path" record of a pax extended header, if any.
StatusOr<std::optional<std::string>> PaxPath(std::string_view data) {
  std::optional<std::string> path;
  while (!data.empty()) {
    size_t space = data.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 20) {
      return InvalidArgument("tar: malformed pax record");
    }
    uint64_t len = 0;
    for (char c : data.substr(0, space)) {
      if (c < '0' || c > '9') return InvalidArgument("tar: malformed pax record length");
      len = len * 10 + (c - '0');
    }
    if (len <= space + 1 || len > data.size() || data[len - 1] != '\n') {
      return InvalidArgument("tar: malformed pax record");
    }
    std::string_view record = data.substr(space + 1, len - space - 2);
    if (record.substr(0, 5) == "path=") path = std::string(record.substr(5));
    data.remove_prefix(len);
  }
  return path;
}

}  // namespace

StatusOr<std::string> CleanTarPath(std::string_view raw) {
  if (raw.find('\0') != std::string_view::npos) return InvalidArgument("tar: NUL in entry name");
  std::string out;
  size_t pos = 0;
  while (pos <= raw.size()) {
    size_t end = raw.find('/', pos);
    if (end == std::string_view::npos) end = raw.size();
    std::string_view part = raw.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return InvalidArgument("tar: entry '" + std::string(raw) + "' escapes the archive");
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

Status ForEachTarEntry(std::string_view archive, const std::function<Status(const TarEntry&)>& visit) {
  std::optional<std::string> long_name;
  size_t pos = 0;
  while (true) {
    if (archive.size() - pos < kBlock) {
      if (pos == archive.size()) break;  // no end-of-archive blocks: tolerated
      return InvalidArgument("tar: truncated header at offset " + std::to_string(pos));
    }
    std::string_view header = archive.substr(pos, kBlock);
    pos += kBlock;
    if (AllZero(header)) break;
    if (!ChecksumOk(header)) return InvalidArgument("tar: bad header checksum at offset " + std::to_string(pos - kBlock));
    std::optional<uint64_t> size = Number(header, 124, 12);
    if (!size) return InvalidArgument("tar: bad size field");
    if (*size > archive.size() - pos) return InvalidArgument("tar: entry data runs past the end");
    std::string_view data = archive.substr(pos, *size);
    uint64_t padded = (*size + kBlock - 1) / kBlock * kBlock;
    pos = padded > archive.size() - pos ? archive.size() : pos + padded;

    char type = header[156];
    if (type == 'L') {
      long_name = std::string(Field(data, 0, data.size()));
      continue;
    }
    if (type == 'x') {
      AIRLOCK_ASSIGN_OR_RETURN(std::optional<std::string> p, PaxPath(data));
      if (p) long_name = std::move(p);
      continue;
    }
    if (type == 'g' || type == 'K') continue;  // global pax header, GNU long link name

    std::string raw;
    if (long_name) {
      raw = std::move(*long_name);
      long_name.reset();
    } else {
      std::string_view prefix = Field(header, 345, 155);
      std::string_view name = Field(header, 0, 100);
      bool ustar = header.substr(257, 5) == "ustar";
      raw = (ustar && !prefix.empty()) ? std::string(prefix) + "/" + std::string(name) : std::string(name);
    }
    AIRLOCK_ASSIGN_OR_RETURN(std::string path, CleanTarPath(raw));
    TarEntry entry{.kind = TarEntry::kOther,
                   .path = std::move(path),
                   .offset = static_cast<uint64_t>(data.data() - archive.data()),
                   .size = data.size()};
    if (type == '5') {
      entry.kind = TarEntry::kDir;
    } else if (type == '0' || type == '\0' || type == '7') {
      if (entry.path.empty()) return InvalidArgument("tar: file entry without a name");
      entry.kind = TarEntry::kFile;
    }
    AIRLOCK_RETURN_IF_ERROR(visit(entry));
  }
  return OkStatus();
}

Status AddTarEntry(std::string_view archive, const TarEntry& entry, Vfs& vfs, const NodePtr& dest,
                   const TarOptions& options, TarStats& stats) {
  if (entry.kind == TarEntry::kDir) {
    AIRLOCK_RETURN_IF_ERROR(vfs.MakeDirs(dest, entry.path).status().WithContext("tar"));
    stats.dirs++;
  } else if (entry.kind == TarEntry::kFile) {
    AIRLOCK_RETURN_IF_ERROR(
        vfs.AddFile(dest, entry.path, archive.substr(entry.offset, entry.size), options.backing).WithContext("tar"));
    stats.files++;
    stats.bytes += entry.size;
  } else {
    stats.skipped++;
  }
  return OkStatus();
}

StatusOr<TarStats> LoadTar(std::string_view archive, Vfs& vfs, const NodePtr& dest,
                           TarOptions options) {
  if (!dest || !dest->is_dir()) return InvalidArgument("tar: destination is not a directory");
  TarStats stats;
  AIRLOCK_RETURN_IF_ERROR(ForEachTarEntry(archive, [&](const TarEntry& entry) {
    return AddTarEntry(archive, entry, vfs, dest, options, stats);
  }));
  if (options.read_only) Vfs::SetReadOnly(dest);
  return stats;
}

}  // namespace airlock::wasm
