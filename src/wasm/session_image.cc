#include "wasm/session_image.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/file_io.h"
#include "wasm/code_cache_file.h"

namespace airlock::wasm {
namespace {

constexpr std::string_view kMagic = "AIRLOCK-WASM-SESSION-IMAGE-1\n";
constexpr uint64_t kMaxPages = 65536;  // 4 GiB: wasm32's whole address space

// FNV-1a, 64 bits: a check against truncation and damage, not an
// authenticator (the image never leaves the runner's private directory).
class Checksum {
 public:
  void Add(std::string_view s) {
    for (unsigned char c : s) h_ = (h_ ^ c) * 0x100000001b3ull;
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

// Buffered writes to an fd, summed as they go.
class Out {
 public:
  explicit Out(int fd) : fd_(fd) {}
  void Put(std::string_view s) {
    sum_.Add(s);
    buf_.append(s);
    if (buf_.size() >= (1u << 20)) Flush();
  }
  void U64(uint64_t v) {
    std::string b;
    PutU64(b, v);
    Put(b);
  }
  Status Finish() {
    std::string tail;
    PutU64(tail, sum_.value());
    buf_ += tail;
    Flush();
    return status_;
  }

 private:
  void Flush() {
    if (status_.ok()) {
      if (Status st = WriteFull(fd_, buf_); !st.ok()) {
        status_ = FailedPrecondition("writing the session image: " + st.message());
      }
    }
    buf_.clear();
  }
  int fd_;
  std::string buf_;
  Checksum sum_;
  Status status_;
};

bool AllZero(const uint8_t* p, size_t n) {
  static const uint8_t kZero[4096] = {};
  for (size_t off = 0; off < n; off += sizeof kZero) {
    if (std::memcmp(p + off, kZero, std::min(sizeof kZero, n - off)) != 0) return false;
  }
  return true;
}

// A file's identity in an image key: its name, size and modification time.
std::string FileIdentity(const SessionImageKeyFile& f) {
  struct stat st{};
  if (::stat((f.stat_path.empty() ? f.path : f.stat_path).c_str(), &st) != 0) return f.path + ":missing";
  return f.path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

std::string SessionImageKey(const SessionImageKeyFile& module, uint64_t cap_mb,
                            const std::vector<std::pair<SessionImageKeyFile, std::string>>& tars) {
  std::string key = "module=" + FileIdentity(module) + " cap_mb=" + std::to_string(cap_mb);
  for (const auto& [tar, guest_dir] : tars) key += " tar=" + FileIdentity(tar) + "@" + guest_dir;
  return key;
}

StatusOr<std::string> SessionImageKeyOf(std::string_view head) {
  if (head.size() < kMagic.size() || head.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgument("not a session image");
  }
  head.remove_prefix(kMagic.size());
  uint64_t n = 0;
  if (!GetU64(head, &n) || n > head.size()) return InvalidArgument("the session image's header is cut short");
  return std::string(head.substr(0, n));
}

void ImageWriter::U64(uint64_t v) { PutU64(out_, v); }

void ImageWriter::Bytes(std::string_view s) {
  PutU64(out_, s.size());
  out_.append(s);
}

bool ImageReader::U64(uint64_t* v) { return GetU64(in_, v); }

bool ImageReader::Bytes(std::string_view* s) {
  uint64_t n = 0;
  if (!GetU64(in_, &n) || n > in_.size()) return false;
  *s = in_.substr(0, n);
  in_.remove_prefix(n);
  return true;
}

Status WriteSessionImage(int fd, const SessionImageParts& parts) {
  if (parts.memory.size() % kSessionPage != 0) return InvalidArgument("memory is not a whole number of pages");
  Out out(fd);
  out.Put(kMagic);
  out.U64(parts.key.size());
  out.Put(parts.key);
  out.U64(static_cast<uint32_t>(parts.stack_pointer));
  const uint64_t pages = parts.memory.size() / kSessionPage;
  out.U64(parts.memory.size());
  // The count comes before the pages: find them once.
  std::vector<uint64_t> nonzero;
  for (uint64_t i = 0; i < pages; ++i) {
    if (!AllZero(parts.memory.data() + i * kSessionPage, kSessionPage)) nonzero.push_back(i);
  }
  out.U64(nonzero.size());
  for (uint64_t i : nonzero) {
    out.U64(i);
    out.Put(std::string_view(reinterpret_cast<const char*>(parts.memory.data() + i * kSessionPage), kSessionPage));
  }
  out.U64(parts.wasi_state.size());
  out.Put(parts.wasi_state);
  return out.Finish();
}

StatusOr<SessionImage> ParseSessionImage(std::string_view bytes, std::string_view key) {
  auto damaged = [](const char* what) { return InvalidArgument(std::string("the session image is damaged: ") + what); };
  if (bytes.size() < kMagic.size() + 8 || bytes.substr(0, kMagic.size()) != kMagic) return damaged("no header");
  std::string_view body = bytes.substr(0, bytes.size() - 8);
  std::string_view tail = bytes.substr(bytes.size() - 8);
  uint64_t want = 0;
  GetU64(tail, &want);
  Checksum sum;
  sum.Add(body);
  if (sum.value() != want) return damaged("checksum mismatch");
  body.remove_prefix(kMagic.size());
  uint64_t n = 0;
  if (!GetU64(body, &n) || n > body.size()) return damaged("key");
  if (body.substr(0, n) != key) {
    return FailedPrecondition("the session image was made by another build of the interpreter or engine");
  }
  body.remove_prefix(n);
  SessionImage image;
  uint64_t sp = 0, count = 0;
  if (!GetU64(body, &sp) || sp > 0xffffffffull) return damaged("stack pointer");
  image.stack_pointer = static_cast<int32_t>(static_cast<uint32_t>(sp));
  if (!GetU64(body, &image.memory_bytes) || image.memory_bytes % kSessionPage != 0 ||
      image.memory_bytes / kSessionPage > kMaxPages) {
    return damaged("memory size");
  }
  if (!GetU64(body, &count) || count > image.memory_bytes / kSessionPage) return damaged("page count");
  image.pages.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t index = 0;
    if (!GetU64(body, &index) || index >= image.memory_bytes / kSessionPage || body.size() < kSessionPage) {
      return damaged("page");
    }
    if (!image.pages.empty() && index <= image.pages.back().first) return damaged("page order");
    image.pages.emplace_back(index, body.substr(0, kSessionPage));
    body.remove_prefix(kSessionPage);
  }
  if (!GetU64(body, &n) || n != body.size()) return damaged("WASI state");
  image.wasi_state = body;
  return image;
}

}  // namespace airlock::wasm
