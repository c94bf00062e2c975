// The image of a paused WASM session (engine/js/python_session.h): what a
// reactor guest is between two of its exports. Its linear memory (only the
// 64 KiB pages that are not all zero), its exported __stack_pointer, and
// the host's WASI state (WasiContext::SaveState: descriptors and the
// writable part of the in-memory filesystem), under a key naming the
// module, standard library and memory cap it was made with; a checksum
// over everything catches a truncated or damaged file.
//
//   AIRLOCK_RETURN_IF_ERROR(wasm::WriteSessionImage(fd, parts));
//   ...
//   AIRLOCK_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
//   AIRLOCK_ASSIGN_OR_RETURN(wasm::SessionImage image, wasm::ParseSessionImage(bytes, key));
//   for (const auto& [index, page] : image.pages) memcpy(mem + index * kSessionPage, page.data(), kSessionPage);
//
// An image is the guest's own data: whatever a cell computed is in it. It
// is read back only by the same engine, in a fresh jail, under the same
// limits (parsing is strict and bounded), so a forged one reaches no
// further than the session it is restored into.
#ifndef AIRLOCK_WASM_SESSION_IMAGE_H_
#define AIRLOCK_WASM_SESSION_IMAGE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace airlock::wasm {

inline constexpr uint64_t kSessionPage = 64 * 1024;

// What WriteSessionImage writes.
struct SessionImageParts {
  std::string_view key;
  int32_t stack_pointer = 0;
  std::span<const uint8_t> memory;
  std::string_view wasi_state;
};

// A parsed image: views into the bytes it was parsed from.
struct SessionImage {
  int32_t stack_pointer = 0;
  uint64_t memory_bytes = 0;  // a whole number of pages
  std::vector<std::pair<uint64_t, std::string_view>> pages;  // page index, its bytes; ascending
  std::string_view wasi_state;
};

// A file an image key names: `path` as the engine is given it (a path in
// its jail), identified by the size and modification time of the file at
// `stat_path` (the same file where this process sees it; "": `path`).
struct SessionImageKeyFile {
  std::string path;
  std::string stat_path;
};

// The key an engine makes its images under (SessionImageParts::key): its
// module, its memory cap in MiB, and each tar with the guest dir it is
// loaded at. Another build of any of them gives another key. The engine
// computes it from its flags; a runner outside the jail computes the same
// from the session's argv and binds (LocalExecutor::ImportSession).
std::string SessionImageKey(const SessionImageKeyFile& module, uint64_t cap_mb,
                            const std::vector<std::pair<SessionImageKeyFile, std::string>>& tars);

// The key an image was made under, read from its first bytes (`head`: at
// least the header and the key; the whole image is never needed).
// InvalidArgument when `head` does not start a session image or ends
// before its key does.
StatusOr<std::string> SessionImageKeyOf(std::string_view head);

// Writes the image to `fd` (from its current offset).
Status WriteSessionImage(int fd, const SessionImageParts& parts);

// Checks and parses `bytes`. FailedPrecondition when it was made under
// another key (another build: restoring it would run another program's
// memory); InvalidArgument when damaged.
StatusOr<SessionImage> ParseSessionImage(std::string_view bytes, std::string_view key);

// A little-endian encoder and a bounds-checked decoder for the parts of an
// image (wasi_state.cc uses them too).
class ImageWriter {
 public:
  void U64(uint64_t v);
  void Bytes(std::string_view s);  // length, then the bytes
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class ImageReader {
 public:
  explicit ImageReader(std::string_view in) : in_(in) {}
  bool U64(uint64_t* v);
  bool Bytes(std::string_view* s);
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_SESSION_IMAGE_H_
