// Guest memory access and the WASI snapshot_preview1 struct layouts.
//
// GuestMemory wraps the guest's linear memory for one host call and makes
// every access bounds-checked (overflow-safe): an out-of-range pointer is a
// `false` result that the caller turns into EFAULT. Values are little-endian
// as in WebAssembly, independent of the host's byte order.
//
//   GuestMemory mem(memory);
//   uint32_t buf, len;
//   if (!mem.Load32(iov, &buf) || !mem.Load32(iov + 4, &len)) return Errno::kFault;
//
// Offsets and sizes below are those of wasi-libc's
// wasi/api.h (generated from the preview1 witx), checked by static_asserts.
#ifndef AIRLOCK_WASM_WASI_LAYOUT_H_
#define AIRLOCK_WASM_WASI_LAYOUT_H_

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace airlock::wasm {

class GuestMemory {
 public:
  explicit GuestMemory(std::span<uint8_t> memory) : mem_(memory) {}

  // Whether [ptr, ptr + len) lies inside the memory.
  bool InRange(uint64_t ptr, uint64_t len) const {
    return ptr <= mem_.size() && len <= mem_.size() - ptr;
  }
  // The bytes at [ptr, ptr + len), or an empty span with ok=false.
  std::span<uint8_t> Slice(uint64_t ptr, uint64_t len, bool* ok) const {
    *ok = InRange(ptr, len);
    return *ok ? mem_.subspan(ptr, len) : std::span<uint8_t>();
  }

  bool Store(uint64_t ptr, std::string_view bytes) {
    if (!InRange(ptr, bytes.size())) return false;
    if (!bytes.empty()) std::memcpy(mem_.data() + ptr, bytes.data(), bytes.size());
    return true;
  }
  bool Store8(uint64_t ptr, uint8_t v) { return StoreLe(ptr, v, 1); }
  bool Store16(uint64_t ptr, uint16_t v) { return StoreLe(ptr, v, 2); }
  bool Store32(uint64_t ptr, uint32_t v) { return StoreLe(ptr, v, 4); }
  bool Store64(uint64_t ptr, uint64_t v) { return StoreLe(ptr, v, 8); }
  bool Zero(uint64_t ptr, uint64_t len) {
    if (!InRange(ptr, len)) return false;
    if (len) std::memset(mem_.data() + ptr, 0, len);
    return true;
  }

  bool Load8(uint64_t ptr, uint8_t* v) const { return LoadLe(ptr, v, 1); }
  bool Load16(uint64_t ptr, uint16_t* v) const { return LoadLe(ptr, v, 2); }
  bool Load32(uint64_t ptr, uint32_t* v) const { return LoadLe(ptr, v, 4); }
  bool Load64(uint64_t ptr, uint64_t* v) const { return LoadLe(ptr, v, 8); }
  // A guest string (not NUL-terminated) as a view into the memory.
  bool LoadString(uint64_t ptr, uint64_t len, std::string_view* out) const {
    if (!InRange(ptr, len)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(mem_.data() + ptr), len);
    return true;
  }

 private:
  template <typename T>
  bool StoreLe(uint64_t ptr, T v, int n) {
    if (!InRange(ptr, n)) return false;
    for (int i = 0; i < n; ++i) mem_[ptr + i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
    return true;
  }
  template <typename T>
  bool LoadLe(uint64_t ptr, T* v, int n) const {
    if (!InRange(ptr, n)) return false;
    uint64_t r = 0;
    for (int i = 0; i < n; ++i) r |= static_cast<uint64_t>(mem_[ptr + i]) << (8 * i);
    *v = static_cast<T>(r);
    return true;
  }

  std::span<uint8_t> mem_;
};

namespace wasi_layout {

// __wasi_iovec_t / __wasi_ciovec_t: { u32 buf; u32 buf_len; }
inline constexpr uint32_t kIovecSize = 8;

// __wasi_filestat_t
inline constexpr uint32_t kFilestatSize = 64;
inline constexpr uint32_t kFilestatDev = 0, kFilestatIno = 8, kFilestatType = 16, kFilestatNlink = 24,
                          kFilestatSizeField = 32, kFilestatAtim = 40, kFilestatMtim = 48,
                          kFilestatCtim = 56;
static_assert(kFilestatCtim + 8 == kFilestatSize);

// __wasi_fdstat_t
inline constexpr uint32_t kFdstatSize = 24;
inline constexpr uint32_t kFdstatType = 0, kFdstatFlags = 2, kFdstatRightsBase = 8,
                          kFdstatRightsInheriting = 16;
static_assert(kFdstatRightsInheriting + 8 == kFdstatSize);

// __wasi_prestat_t: { u8 tag (0 = dir); u32 pr_name_len @4 }
inline constexpr uint32_t kPrestatSize = 8;
inline constexpr uint32_t kPrestatTag = 0, kPrestatNameLen = 4;
static_assert(kPrestatNameLen + 4 == kPrestatSize);

// __wasi_dirent_t header, followed by d_namlen name bytes (no NUL)
inline constexpr uint32_t kDirentSize = 24;
inline constexpr uint32_t kDirentNext = 0, kDirentIno = 8, kDirentNamlen = 16, kDirentType = 20;
static_assert(kDirentType + 4 == kDirentSize);  // 3 bytes of padding after d_type

// __wasi_subscription_t: userdata u64 @0, tag u8 @8, union @16
inline constexpr uint32_t kSubscriptionSize = 48;
inline constexpr uint32_t kSubUserdata = 0, kSubTag = 8, kSubClockId = 16, kSubClockTimeout = 24,
                          kSubClockPrecision = 32, kSubClockFlags = 40, kSubFd = 16;
static_assert(kSubClockFlags + 8 == kSubscriptionSize);  // u16 flags, padded to 8

// __wasi_event_t: userdata u64 @0, error u16 @8, type u8 @10, fd_readwrite @16
inline constexpr uint32_t kEventSize = 32;
inline constexpr uint32_t kEventUserdata = 0, kEventError = 8, kEventType = 10, kEventNbytes = 16,
                          kEventFlags = 24;
static_assert(kEventFlags + 8 == kEventSize);

}  // namespace wasi_layout

// Constants of the preview1 witx.
namespace wasi {

inline constexpr uint32_t kClockRealtime = 0, kClockMonotonic = 1, kClockProcessCputime = 2,
                          kClockThreadCputime = 3;
inline constexpr uint8_t kWhenceSet = 0, kWhenceCur = 1, kWhenceEnd = 2;
inline constexpr uint16_t kOflagCreat = 1, kOflagDirectory = 2, kOflagExcl = 4, kOflagTrunc = 8;
inline constexpr uint16_t kFdflagAppend = 1, kFdflagDsync = 2, kFdflagNonblock = 4, kFdflagRsync = 8,
                          kFdflagSync = 16;
inline constexpr uint16_t kFstflagAtim = 1, kFstflagAtimNow = 2, kFstflagMtim = 4, kFstflagMtimNow = 8;
inline constexpr uint8_t kEventClock = 0, kEventFdRead = 1, kEventFdWrite = 2;
inline constexpr uint16_t kSubclockAbstime = 1;

inline constexpr uint64_t kRightFdDatasync = 1ull << 0, kRightFdRead = 1ull << 1, kRightFdSeek = 1ull << 2,
                          kRightFdFdstatSetFlags = 1ull << 3, kRightFdSync = 1ull << 4,
                          kRightFdTell = 1ull << 5, kRightFdWrite = 1ull << 6, kRightFdAdvise = 1ull << 7,
                          kRightFdAllocate = 1ull << 8, kRightPathCreateDirectory = 1ull << 9,
                          kRightPathCreateFile = 1ull << 10, kRightPathLinkSource = 1ull << 11,
                          kRightPathLinkTarget = 1ull << 12, kRightPathOpen = 1ull << 13,
                          kRightFdReaddir = 1ull << 14, kRightPathReadlink = 1ull << 15,
                          kRightPathRenameSource = 1ull << 16, kRightPathRenameTarget = 1ull << 17,
                          kRightPathFilestatGet = 1ull << 18, kRightPathFilestatSetSize = 1ull << 19,
                          kRightPathFilestatSetTimes = 1ull << 20, kRightFdFilestatGet = 1ull << 21,
                          kRightFdFilestatSetSize = 1ull << 22, kRightFdFilestatSetTimes = 1ull << 23,
                          kRightPathSymlink = 1ull << 24, kRightPathRemoveDirectory = 1ull << 25,
                          kRightPathUnlinkFile = 1ull << 26, kRightPollFdReadwrite = 1ull << 27,
                          kRightSockShutdown = 1ull << 28, kRightSockAccept = 1ull << 29;
inline constexpr uint64_t kAllRights = (1ull << 30) - 1;
// Rights that modify a file's contents.
inline constexpr uint64_t kWriteRights = kRightFdDatasync | kRightFdWrite | kRightFdAllocate |
                                         kRightFdFilestatSetSize;

}  // namespace wasi
}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_WASI_LAYOUT_H_
