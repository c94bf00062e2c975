// WASI snapshot_preview1 error numbers and file types, shared by the
// in-memory filesystem (vfs.h) and the WASI implementation (wasi.h).
//
// The values are those of the witx definitions (`errno` is a u16, `filetype`
// a u8), so a VFS result can be handed to the guest unchanged:
//
//   wasm::Errno e = vfs.Lookup(dir, "a/b.txt", &node);
//   if (e != wasm::Errno::kSuccess) return static_cast<uint32_t>(e);
#ifndef AIRLOCK_WASM_WASI_ERRNO_H_
#define AIRLOCK_WASM_WASI_ERRNO_H_

#include <cstdint>

namespace airlock::wasm {

enum class Errno : uint16_t {
  kSuccess = 0,
  k2Big = 1,
  kAcces = 2,
  kAgain = 6,
  kBadf = 8,
  kBusy = 10,
  kDquot = 19,
  kExist = 20,
  kFault = 21,
  kFbig = 22,
  kIlseq = 25,
  kInval = 28,
  kIo = 29,
  kIsdir = 31,
  kLoop = 32,
  kMfile = 33,
  kNametoolong = 37,
  kNoent = 44,
  kNomem = 48,
  kNospc = 51,
  kNosys = 52,
  kNotdir = 54,
  kNotempty = 55,
  kNotsup = 58,
  kOverflow = 61,
  kPerm = 63,
  kRofs = 69,
  kSpipe = 70,
  kXdev = 75,
  kNotcapable = 76,
};

enum class FileType : uint8_t {
  kUnknown = 0,
  kBlockDevice = 1,
  kCharacterDevice = 2,
  kDirectory = 3,
  kRegularFile = 4,
  kSocketDgram = 5,
  kSocketStream = 6,
  kSymbolicLink = 7,
};

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_WASI_ERRNO_H_
