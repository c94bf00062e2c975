#include "runtimes/build_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "base/encoding.h"
#include "base/file_io.h"

namespace airlock::runtimes {
namespace {

constexpr std::string_view kHeaderMagic = "airlock-build-cache v1";
constexpr size_t kMaxHeaderBytes = 256;
constexpr std::string_view kTempPrefix = ".tmp-";
constexpr time_t kStaleTempSeconds = 600;

void AppendU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void AppendField(std::string* out, std::string_view s) {
  AppendU64(out, s.size());
  out->append(s);
}

// "airlock-build-cache v1 <key> <sha256 of payload> <payload size>\n"
std::string MakeHeader(std::string_view key, std::string_view payload) {
  std::string h(kHeaderMagic);
  h += ' ';
  h += key;
  h += ' ';
  h += Sha256Hex(payload);
  h += ' ';
  h += std::to_string(payload.size());
  h += '\n';
  return h;
}

// Reads the whole of `fd`; fails (returns false) past `limit` bytes.
bool ReadAll(int fd, size_t limit, std::string* out) {
  out->clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    if (out->size() + static_cast<size_t>(n) > limit) return false;
    out->append(buf, static_cast<size_t>(n));
  }
}

// The payload of a cache file read whole, if its header matches `key` and the
// payload's size and SHA-256.
std::optional<std::string> VerifiedPayload(std::string_view key, std::string data) {
  size_t nl = data.find('\n');
  if (nl == std::string::npos || nl >= kMaxHeaderBytes) return std::nullopt;
  std::string_view payload = std::string_view(data).substr(nl + 1);
  if (std::string_view(data).substr(0, nl + 1) != MakeHeader(key, payload)) return std::nullopt;
  data.erase(0, nl + 1);
  return data;
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

bool IsValidBuildKey(std::string_view key) {
  if (key.size() != 64) return false;
  return std::all_of(key.begin(), key.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string BuildKey(const BuildKeyInput& in) {
  std::vector<const std::pair<std::string, std::string>*> files;
  files.reserve(in.files.size());
  for (const auto& f : in.files) files.push_back(&f);
  std::sort(files.begin(), files.end(), [](const auto* a, const auto* b) { return *a < *b; });

  std::string enc = "airlock-build-key v1";
  AppendField(&enc, in.language);
  AppendField(&enc, in.isolation);
  AppendU64(&enc, in.compile_argv.size());
  for (const std::string& arg : in.compile_argv) AppendField(&enc, arg);
  AppendField(&enc, in.compiler_version);
  AppendU64(&enc, files.size());
  for (const auto* f : files) {
    AppendField(&enc, f->first);
    AppendField(&enc, f->second);
  }
  return Sha256Hex(enc);
}

BuildCache::BuildCache(Options options, UniqueFd dir) : options_(std::move(options)), dir_(std::move(dir)) {}

BuildCache::~BuildCache() = default;

StatusOr<std::unique_ptr<BuildCache>> BuildCache::Open(Options options) {
  if (options.max_bytes == 0) {
    return std::unique_ptr<BuildCache>(new BuildCache(std::move(options), UniqueFd()));
  }
  if (options.dir.empty()) return InvalidArgument("build cache: empty directory path");

  std::filesystem::path path(options.dir);
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) return Internal("build cache: create " + path.parent_path().string() + ": " + ec.message());
  }
  if (::mkdir(options.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError("build cache: mkdir " + options.dir);
  }
  UniqueFd dir(::open(options.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return ErrnoError("build cache: open " + options.dir + " (must be a real directory)");
  struct stat st;
  if (::fstat(dir.get(), &st) != 0) return ErrnoError("build cache: fstat " + options.dir);
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition("build cache: " + options.dir + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return PermissionDenied("build cache: " + options.dir + " is owned by uid " + std::to_string(st.st_uid));
  }
  if ((st.st_mode & 07777) != 0700 && ::fchmod(dir.get(), 0700) != 0) {
    return ErrnoError("build cache: chmod 0700 " + options.dir);
  }

  std::unique_ptr<BuildCache> cache(new BuildCache(std::move(options), std::move(dir)));
  AIRLOCK_RETURN_IF_ERROR(cache->Scan());
  return cache;
}

Status BuildCache::Scan() {
  int fd = ::dup(dir_.get());
  if (fd < 0) return ErrnoError("build cache: dup");
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    int err = errno;
    ::close(fd);
    return ErrnoError("build cache: fdopendir", err);
  }
  ::rewinddir(d);
  // (mtime, name, size), sorted oldest first.
  std::vector<std::tuple<struct timespec, std::string, uint64_t>> found;
  std::vector<std::string> stale_temps;
  const time_t now = ::time(nullptr);
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    bool is_key = IsValidBuildKey(name);
    bool is_temp = name.compare(0, kTempPrefix.size(), kTempPrefix) == 0;
    if (!is_key && !is_temp) continue;
    struct stat st;
    if (::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (is_key) {
      found.emplace_back(st.st_mtim, std::move(name), static_cast<uint64_t>(st.st_size));
    } else if (now - st.st_mtim.tv_sec > kStaleTempSeconds) {
      stale_temps.push_back(std::move(name));  // left by a crashed writer
    }
  }
  ::closedir(d);
  for (const std::string& t : stale_temps) ::unlinkat(dir_.get(), t.c_str(), 0);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    const struct timespec& ta = std::get<0>(a);
    const struct timespec& tb = std::get<0>(b);
    return std::tie(ta.tv_sec, ta.tv_nsec, std::get<1>(a)) < std::tie(tb.tv_sec, tb.tv_nsec, std::get<1>(b));
  });

  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [mtime, name, bytes] : found) TouchLocked(name, bytes);
  EvictLocked("");
  return OkStatus();
}

void BuildCache::TouchLocked(const std::string& key, uint64_t bytes) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    total_bytes_ -= it->second.bytes;
    lru_.erase(it->second.lru);
  } else {
    it = index_.emplace(key, Entry{}).first;
  }
  lru_.push_front(key);
  it->second.lru = lru_.begin();
  it->second.bytes = bytes;
  total_bytes_ += bytes;
}

void BuildCache::ForgetLocked(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return;
  total_bytes_ -= it->second.bytes;
  lru_.erase(it->second.lru);
  index_.erase(it);
}

void BuildCache::EvictLocked(const std::string& keep) {
  while (total_bytes_ > options_.max_bytes && !lru_.empty() && lru_.back() != keep) {
    std::string victim = lru_.back();
    ::unlinkat(dir_.get(), victim.c_str(), 0);  // ENOENT: another process got there first
    ForgetLocked(victim);
    ++stats_.evictions;
  }
}

void BuildCache::RemoveIfSameLocked(const std::string& key, int fd) {
  struct stat open_st, named_st;
  if (::fstatat(dir_.get(), key.c_str(), &named_st, AT_SYMLINK_NOFOLLOW) != 0) {
    ForgetLocked(key);  // already gone
    return;
  }
  if (::fstat(fd, &open_st) == 0 && SameFile(open_st, named_st)) {
    ::unlinkat(dir_.get(), key.c_str(), 0);
    ForgetLocked(key);
  }
  // Otherwise a newer entry was renamed over it meanwhile: keep that one.
}

std::optional<std::string> BuildCache::Get(const std::string& key) {
  if (!enabled()) return std::nullopt;
  if (!IsValidBuildKey(key)) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.misses;
    return std::nullopt;
  }
  UniqueFd fd(::openat(dir_.get(), key.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    std::lock_guard<std::mutex> lock(mu_);
    struct stat named;
    // Unless another thread has just put it, the index entry is stale.
    if (::fstatat(dir_.get(), key.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0) ForgetLocked(key);
    ++stats_.misses;
    return std::nullopt;
  }
  struct stat st;
  std::string data;
  std::optional<std::string> payload;
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
      ReadAll(fd.get(), options_.max_entry_bytes + kMaxHeaderBytes, &data)) {
    payload = VerifiedPayload(key, std::move(data));
  }
  if (!payload) {
    std::lock_guard<std::mutex> lock(mu_);
    RemoveIfSameLocked(key, fd.get());
    ++stats_.corrupt;
    ++stats_.misses;
    return std::nullopt;
  }
  ::futimens(fd.get(), nullptr);  // recency survives a reopen; best effort

  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.hits;
  struct stat named;
  const bool in_place =
      ::fstatat(dir_.get(), key.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 && SameFile(st, named);
  auto it = index_.find(key);
  if (in_place) {
    // Possibly written by another process: adopt it, then keep the bound.
    TouchLocked(key, static_cast<uint64_t>(st.st_size));
    EvictLocked(key);
  } else if (it != index_.end()) {
    // A newer entry was renamed over the one we read: refresh its recency.
    TouchLocked(key, it->second.bytes);
  }
  // Otherwise it was evicted after we opened it: nothing to track.
  return payload;
}

Status BuildCache::Put(const std::string& key, std::string_view artifact) {
  if (!enabled()) return OkStatus();
  if (!IsValidBuildKey(key)) return InvalidArgument("build cache: malformed key");
  if (artifact.size() > options_.max_entry_bytes) {
    return ResourceExhausted("build cache: artifact of " + std::to_string(artifact.size()) +
                             " bytes exceeds max_entry_bytes " + std::to_string(options_.max_entry_bytes));
  }
  const std::string header = MakeHeader(key, artifact);
  const uint64_t bytes = header.size() + artifact.size();
  if (bytes > options_.max_bytes) {
    return ResourceExhausted("build cache: entry of " + std::to_string(bytes) + " bytes exceeds max_bytes " +
                             std::to_string(options_.max_bytes));
  }

  std::string temp;
  UniqueFd fd;
  for (int attempt = 0; attempt < 16 && !fd; ++attempt) {
    temp = std::string(kTempPrefix) + std::to_string(::getpid()) + "-" + std::to_string(temp_counter_++) + "-" +
           key.substr(0, 16);
    fd.Reset(::openat(dir_.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd && errno != EEXIST) return ErrnoError("build cache: create " + temp);
  }
  if (!fd) return Internal("build cache: no free temporary name");
  Status written = WriteFull(fd.get(), header);
  if (written.ok()) written = WriteFull(fd.get(), artifact);
  if (written.ok() && ::close(fd.Release()) != 0) written = ErrnoError("build cache: close");
  if (!written.ok()) {
    ::unlinkat(dir_.get(), temp.c_str(), 0);
    return written.WithContext("build cache: write " + temp);
  }

  std::lock_guard<std::mutex> lock(mu_);
  if (::renameat(dir_.get(), temp.c_str(), dir_.get(), key.c_str()) != 0) {
    Status err = ErrnoError("build cache: rename " + temp);
    ::unlinkat(dir_.get(), temp.c_str(), 0);
    return err;
  }
  TouchLocked(key, bytes);
  ++stats_.puts;
  EvictLocked(key);
  return OkStatus();
}

uint64_t BuildCache::total_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_bytes_;
}

size_t BuildCache::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return index_.size();
}

BuildCache::Stats BuildCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string ToolchainIdentity(const std::string& compiler) {
  std::string id;
  for (const std::string& path : {compiler, std::string("/var/lib/dpkg/status")}) {
    struct stat st{};
    if (stat(path.c_str(), &st) != 0) return "";
    id += path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
          std::to_string(st.st_mtim.tv_nsec) + ";";
  }
  return id;
}


}  // namespace airlock::runtimes
