#include "wasm/code_cache_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <utility>

#include "base/file_io.h"
#include "base/unique_fd.h"

namespace airlock::wasm {
namespace {

// The file: kMagic, then the key and the encoding, each number a
// little-endian u64:
//   build id length, build id, module size, module mtime (ns), module inode,
//   memory cap, encoding length, encoding.
constexpr char kMagic[] = "AIRLOCK-WASM-CODE-1\n";
constexpr size_t kMagicLength = sizeof kMagic - 1;


std::string Header(const CodeCacheKey& key, uint64_t encoding_length) {
  std::string h(kMagic, kMagicLength);
  PutU64(h, key.build_id.size());
  h += key.build_id;
  PutU64(h, key.module_size);
  PutU64(h, static_cast<uint64_t>(key.module_mtime_ns));
  PutU64(h, key.module_inode);
  PutU64(h, key.memory_cap_bytes);
  PutU64(h, encoding_length);
  return h;
}

}  // namespace

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool GetU64(std::string_view& in, uint64_t* v) {
  if (in.size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) *v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(8);
  return true;
}

StatusOr<CodeCacheKey> CodeCacheKeyFor(const std::string& module_path, uint64_t cap_bytes, std::string build_id) {
  if (build_id.empty()) return FailedPrecondition("the engine gives no code build id");
  struct stat st{};
  if (::stat(module_path.c_str(), &st) != 0) return ErrnoError("stat " + module_path);
  CodeCacheKey key;
  key.build_id = std::move(build_id);
  key.module_size = static_cast<uint64_t>(st.st_size);
  key.module_mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  key.module_inode = static_cast<uint64_t>(st.st_ino);
  key.memory_cap_bytes = cap_bytes;
  return key;
}

Status WriteCodeCache(const std::string& path, const CodeCacheKey& key, std::string_view encoding) {
  if (encoding.empty()) return InvalidArgument("no code to write");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) return ErrnoError("create " + tmp);
  Status st = WriteFull(fd.get(), Header(key, encoding.size()));
  if (st.ok()) st = WriteFull(fd.get(), encoding);
  if (!st.ok()) st = Status(st.code(), tmp + ": " + st.message());
  if (st.ok() && ::fchmod(fd.get(), 0644) != 0) st = ErrnoError("chmod " + tmp);
  if (st.ok() && ::fsync(fd.get()) != 0) st = ErrnoError("fsync " + tmp);
  fd.Reset();
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) st = ErrnoError("rename to " + path);
  if (!st.ok()) ::unlink(tmp.c_str());
  return st;
}

int RemoveStaleWrites(const std::string& path) {
  const std::filesystem::path target(path);
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(target.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0 && entry.is_regular_file(ec) &&
        std::filesystem::remove(entry.path(), ec)) {
      ++removed;
    }
  }
  return removed;
}

StatusOr<CacheUpdate> UpdateCodeCache(const std::string& path, const CodeCacheKey& key,
                                      const std::function<StatusOr<std::string>()>& produce) {
  UniqueFd lock(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!lock) return ErrnoError("open " + path + ".lock");
  int locked;
  do {
    locked = ::flock(lock.get(), LOCK_EX);
  } while (locked != 0 && errno == EINTR);
  if (locked != 0) return ErrnoError("lock " + path + ".lock");
  // With the lock held no other writer is at work: a temporary file is
  // what a writer killed mid-write (its runner stopped) left behind.
  RemoveStaleWrites(path);
  if (ReadCodeCache(path, key).ok()) return CacheUpdate::kUpToDate;
  AIRLOCK_ASSIGN_OR_RETURN(std::string encoding, produce());
  AIRLOCK_RETURN_IF_ERROR(WriteCodeCache(path, key, encoding));
  return CacheUpdate::kWritten;
}

MappedCode::MappedCode(MappedCode&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      encoding_(std::exchange(other.encoding_, {})) {}

MappedCode& MappedCode::operator=(MappedCode&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(base_, length_);
    base_ = std::exchange(other.base_, nullptr);
    length_ = std::exchange(other.length_, 0);
    encoding_ = std::exchange(other.encoding_, {});
  }
  return *this;
}

MappedCode::~MappedCode() {
  if (base_ != nullptr) ::munmap(base_, length_);
}

StatusOr<MappedCode> ReadCodeCache(const std::string& path, const CodeCacheKey& key) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    if (errno == ENOENT) return NotFound("no code cache at " + path);
    return ErrnoError("open " + path);
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("stat " + path);
  if (!S_ISREG(st.st_mode) || st.st_size <= 0) return FailedPrecondition(path + " is not a code cache");
  MappedCode code;
  code.length_ = static_cast<size_t>(st.st_size);
  void* base = ::mmap(nullptr, code.length_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoError("mmap " + path);
  code.base_ = base;
  std::string_view in(static_cast<const char*>(base), code.length_);
  const std::string expected = Header(key, 0);
  // Everything but the encoding's length (the header's last 8 bytes) must
  // be what this module, cap and engine would have written.
  const size_t fixed = expected.size() - 8;
  if (in.size() < expected.size() || in.substr(0, fixed) != std::string_view(expected).substr(0, fixed)) {
    return FailedPrecondition(path + " was made for another module, memory cap or engine build");
  }
  in.remove_prefix(fixed);
  uint64_t length = 0;
  if (!GetU64(in, &length) || length == 0 || length != in.size()) {
    return FailedPrecondition(path + " is not whole");
  }
  code.encoding_ = in;
  return code;
}

StatusOr<CodeCacheKey> ReadCodeCacheKey(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return ErrnoError("open " + path);
  char buf[4096];
  ssize_t n;
  do {
    n = ::read(fd.get(), buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoError("read " + path);
  std::string_view in(buf, static_cast<size_t>(n));
  if (in.substr(0, kMagicLength) != std::string_view(kMagic, kMagicLength)) {
    return FailedPrecondition(path + " is not a code cache");
  }
  in.remove_prefix(kMagicLength);
  CodeCacheKey key;
  uint64_t id_length = 0;
  uint64_t mtime = 0;
  if (!GetU64(in, &id_length) || id_length > in.size()) return FailedPrecondition(path + " is not whole");
  key.build_id = std::string(in.substr(0, id_length));
  in.remove_prefix(id_length);
  if (!GetU64(in, &key.module_size) || !GetU64(in, &mtime) || !GetU64(in, &key.module_inode) ||
      !GetU64(in, &key.memory_cap_bytes)) {
    return FailedPrecondition(path + " is not whole");
  }
  key.module_mtime_ns = static_cast<int64_t>(mtime);
  return key;
}

}  // namespace airlock::wasm
