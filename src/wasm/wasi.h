// WASI snapshot_preview1 over the in-memory filesystem, independent of any
// WebAssembly engine.
//
// A WasiContext is one guest process: its arguments, environment, file
// descriptor table (stdin/stdout/stderr, the preopened VFS directories and
// whatever the guest opens), captured output, clocks and exit status. The
// engine binding registers every entry of Imports() under the module
// "wasi_snapshot_preview1" and forwards each call to Call(), passing the
// guest's linear memory (fetched anew for every call, since memory.grow may
// move it) and the integer arguments (i32 zero- or sign-extended, i64 as is).
// The result is the WASI errno to return to the guest, or kStop after
// proc_exit: the binding must then stop execution and read exit_code().
//
//   wasm::WasiOptions opts;
//   opts.args = {"python", "main.py"};
//   opts.preopens = {{"/work", work_dir}, {"/usr", stdlib_dir}};
//   wasm::WasiContext wasi(vfs, std::move(opts));
//   for (size_t i = 0; i < wasm::WasiContext::Imports().size(); ++i) register(i, ...);
//   // in the import trampoline:
//   uint32_t r = wasi.Call(i, memory_span, args);
//   if (r == wasm::WasiContext::kStop) ... stop the instance ...
//
// No call ever reaches the host's filesystem, network or processes: sockets
// are refused (ENOTCAPABLE / ENOSYS), paths never leave their preopen, every
// guest pointer is bounds-checked (EFAULT). Output past a stream's cap is
// counted but dropped and the stream is marked truncated; the engine decides
// whether that ends the run. poll_oneoff sleeps, but never past `deadline`.
#ifndef AIRLOCK_WASM_WASI_H_
#define AIRLOCK_WASM_WASI_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wasm/vfs.h"
#include "wasm/wasi_errno.h"
#include "wasm/wasi_layout.h"

namespace airlock::wasm {

// Time and randomness, injectable for tests. Unset members use the host:
// clock_gettime, nanosleep and getrandom.
struct WasiHost {
  std::function<uint64_t()> realtime_ns;
  std::function<uint64_t()> monotonic_ns;
  std::function<uint64_t()> cputime_ns;
  std::function<void(uint64_t ns)> sleep_ns;
  std::function<void(std::span<uint8_t>)> random;
};

struct WasiPreopen {
  std::string guest_path;  // e.g. "/work"
  NodePtr dir;
};

// A byte stream the host offers the guest at a descriptor of its own (a
// session's control channel, airlock-js --control-fd): the guest's fd_read
// and fd_write on `guest_fd` call these, which may block. Not seekable, no
// path, invisible to fd_prestat_* (wasi-libc never takes it for a preopen).
// `guest_fd` is above the preopens, or 0: then it replaces stdin (for a
// guest whose runtime keeps its own descriptor table, as ruby.wasm's
// wasi-vfs does, and only passes 0-2 through).
struct WasiHostStream {
  uint32_t guest_fd = 0;
  // Fills at most `into.size()` bytes; *got = 0 at the end of the stream.
  std::function<Errno(std::span<uint8_t> into, size_t* got)> read;
  // Writes all of `bytes` or fails.
  std::function<Errno(std::string_view bytes)> write;
};

struct WasiOptions {
  std::vector<std::string> args;
  std::vector<std::string> env;  // "NAME=value"; empty unless given
  std::vector<WasiPreopen> preopens;
  std::string stdin_bytes;
  uint64_t stdout_cap = 1 << 20;
  uint64_t stderr_cap = 1 << 20;
  uint32_t max_fds = 1024;
  // On the monotonic clock; poll_oneoff never sleeps past it.
  std::optional<uint64_t> deadline_monotonic_ns;
  // When set, stdin_bytes is ignored: the guest's first read of stdin calls
  // this once and reads what it returns (a pre-started guest's input, which
  // exists only after the hand-over).
  std::function<std::string()> stdin_source;
  // When set, what the guest writes to stdout (fd 1) and stderr (fd 2) is
  // passed on as it is written, uncapped and not kept (stdout_output() stays
  // empty): airlock-js writes it to its own pipes, whose reader (the jail's
  // supervisor) enforces the run's output limit exactly as for a native
  // program, ending the run at the limit or dropping the rest.
  std::function<void(int fd, std::string_view bytes)> output_sink;
  std::optional<WasiHostStream> host_stream;
  WasiHost host;
};

// Captured stdout or stderr.
struct WasiOutput {
  std::string data;     // at most the cap
  uint64_t total = 0;   // bytes the guest wrote, kept or not
  bool truncated = false;
};

enum class WasmType : uint8_t { kI32, kI64 };

struct WasiImport {
  const char* name;
  std::vector<WasmType> params;
  bool has_result;  // false only for proc_exit
};

class WasiContext {
 public:
  // Returned by Call after proc_exit: stop the guest.
  static constexpr uint32_t kStop = 0xFFFFFFFFu;

  WasiContext(Vfs& vfs, WasiOptions options);
  WasiContext(const WasiContext&) = delete;
  WasiContext& operator=(const WasiContext&) = delete;

  // Every preview1 function, in a fixed order (the index Call takes).
  static const std::vector<WasiImport>& Imports();
  // Index of `name` in Imports(), or -1.
  static int ImportIndex(std::string_view name);

  uint32_t Call(size_t index, std::span<uint8_t> memory, std::span<const uint64_t> args);
  uint32_t Call(std::string_view name, std::span<uint8_t> memory, std::span<const uint64_t> args);

  // Sets the deadline of a context created without one (see stdin_source).
  void SetDeadline(uint64_t monotonic_ns) { opts_.deadline_monotonic_ns = monotonic_ns; }

  // A paused session's host side (wasm/session_image.h; wasi_state.cc):
  // every descriptor (offsets, flags, rights; the file or directory it
  // names, by path, or the contents of an open file since unlinked) and
  // every writable file and directory of the filesystem with its times.
  // Read-only trees (a runtime's standard library) are not kept: LoadState
  // expects them already there, as the same flags load them. Only between
  // two guest calls.
  std::string SaveState() const;
  // Replaces the descriptor table with the saved one and adds the saved
  // files and directories (replacing files of the same path). On error the
  // context must not be used (InvalidArgument: a damaged state).
  Status LoadState(std::string_view state);

  bool exited() const { return exit_code_.has_value(); }
  std::optional<uint32_t> exit_code() const { return exit_code_; }
  const WasiOutput& stdout_output() const { return out_[0]; }
  const WasiOutput& stderr_output() const { return out_[1]; }

 private:
  enum class FdKind { kStdin, kStdout, kStderr, kFile, kDir, kHostStream };
  // fd_readdir cookies of a directory descriptor past "." (1) and ".." (2):
  // each names the child the listing resumes after, so entries removed
  // while listing (rm -r) do not make it skip the ones not yet listed.
  // names[i] has cookie base + i; at kMaxDirCookies names the table starts
  // over above the old numbers (older cookies then count entries).
  struct DirCookies {
    static constexpr size_t kMaxDirCookies = 1 << 16;
    uint64_t base = 3;
    std::vector<std::string> names;
    std::map<std::string, uint64_t, std::less<>> of;
  };
  struct Fd {
    FdKind kind;
    NodePtr node;
    uint64_t offset = 0;
    uint16_t flags = 0;
    uint64_t rights_base = 0;
    uint64_t rights_inheriting = 0;
    std::string preopen_path;  // set for preopened directories
    DirCookies cookies = {};   // kDir only
  };
  using Args = std::span<const uint64_t>;

  Errno Dispatch(size_t index, GuestMemory& mem, Args a);
  Fd* GetFd(uint32_t fd);
  Errno AllocFd(Fd fd, uint32_t* out);
  uint64_t Now(uint32_t clock_id, bool* ok) const;
  void Sleep(uint64_t ns) const;

  // wasi.cc: process, clocks, random, poll, sockets.
  Errno ArgsGet(GuestMemory& mem, const std::vector<std::string>& list, uint32_t ptrs, uint32_t buf);
  Errno SizesGet(GuestMemory& mem, const std::vector<std::string>& list, uint32_t count, uint32_t size);
  Errno ClockResGet(GuestMemory& mem, uint32_t id, uint32_t out);
  Errno ClockTimeGet(GuestMemory& mem, uint32_t id, uint32_t out);
  Errno RandomGet(GuestMemory& mem, uint32_t buf, uint32_t len);
  Errno PollOneoff(GuestMemory& mem, uint32_t in, uint32_t out, uint32_t nsubs, uint32_t nevents);

  // wasi_fd.cc: descriptor operations.
  Errno FdClose(uint32_t fd);
  Errno FdFdstatGet(GuestMemory& mem, uint32_t fd, uint32_t out);
  Errno FdFdstatSetFlags(uint32_t fd, uint32_t flags);
  Errno FdFilestatGet(GuestMemory& mem, uint32_t fd, uint32_t out);
  Errno FdFilestatSetSize(uint32_t fd, uint64_t size);
  Errno FdFilestatSetTimes(uint32_t fd, uint64_t atim, uint64_t mtim, uint32_t fst);
  Errno FdAllocate(uint32_t fd, uint64_t offset, uint64_t len);
  Errno FdRead(GuestMemory& mem, uint32_t fd, uint32_t iovs, uint32_t n, const uint64_t* offset,
               uint32_t out);
  Errno FdWrite(GuestMemory& mem, uint32_t fd, uint32_t iovs, uint32_t n, const uint64_t* offset,
                uint32_t out);
  Errno FdPrestatGet(GuestMemory& mem, uint32_t fd, uint32_t out);
  Errno FdPrestatDirName(GuestMemory& mem, uint32_t fd, uint32_t path, uint32_t len);
  Errno FdReaddir(GuestMemory& mem, uint32_t fd, uint32_t buf, uint32_t len, uint64_t cookie,
                  uint32_t out);
  Errno FdRenumber(uint32_t from, uint32_t to);
  Errno FdSeek(GuestMemory& mem, uint32_t fd, int64_t offset, uint32_t whence, uint32_t out);
  Errno FdTell(GuestMemory& mem, uint32_t fd, uint32_t out);
  Errno FdSync(uint32_t fd);
  void AppendOutput(WasiOutput& out, uint64_t cap, std::string_view bytes);

  // wasi_path.cc: path operations.
  // A path's parent directory and final component (Vfs::ResolveParent).
  struct PathParent {
    NodePtr dir;
    std::string leaf;
    bool trailing = false;  // the path ended in '/'
  };
  Errno DirFd(uint32_t fd, Fd** out);
  // The directory `dirfd` names and the guest's path string at [ptr, ptr+len):
  // the start of every path_* call. LookupAt and ParentAt resolve it.
  Errno DirAndPath(GuestMemory& mem, uint32_t dirfd, uint32_t ptr, uint32_t len, NodePtr* dir,
                   std::string_view* path);
  Errno LookupAt(GuestMemory& mem, uint32_t dirfd, uint32_t ptr, uint32_t len, NodePtr* out);
  Errno ParentAt(GuestMemory& mem, uint32_t dirfd, uint32_t ptr, uint32_t len, PathParent* out);
  Errno PathOpen(GuestMemory& mem, uint32_t dirfd, uint32_t path, uint32_t path_len, uint32_t oflags,
                 uint64_t rights_base, uint64_t rights_inheriting, uint32_t fdflags, uint32_t out);
  Errno PathCreateDirectory(GuestMemory& mem, uint32_t dirfd, uint32_t path, uint32_t len);
  Errno PathFilestatGet(GuestMemory& mem, uint32_t dirfd, uint32_t path, uint32_t len, uint32_t out);
  Errno PathFilestatSetTimes(GuestMemory& mem, uint32_t dirfd, uint32_t path, uint32_t len,
                             uint64_t atim, uint64_t mtim, uint32_t fst);
  Errno PathReadlink(GuestMemory& mem, uint32_t dirfd, uint32_t path, uint32_t len);
  Errno PathRemove(GuestMemory& mem, uint32_t dirfd, uint32_t path, uint32_t len, bool dir);
  Errno PathRename(GuestMemory& mem, uint32_t old_fd, uint32_t old_path, uint32_t old_len,
                   uint32_t new_fd, uint32_t new_path, uint32_t new_len);
  Errno WriteFilestat(GuestMemory& mem, uint32_t out, const Node* node, FileType type);
  Errno SetTimes(const NodePtr& node, uint64_t atim, uint64_t mtim, uint32_t fst);

  Vfs& vfs_;
  WasiOptions opts_;
  std::map<uint32_t, Fd> fds_;
  uint64_t stdin_offset_ = 0;
  WasiOutput out_[2];
  std::optional<uint32_t> exit_code_;
};

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_WASI_H_
