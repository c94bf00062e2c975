#include "wasm/wasi.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <thread>

namespace airlock::wasm {
namespace {

using wasi_layout::kEventSize;
using wasi_layout::kSubscriptionSize;

// Order of Imports(); Dispatch switches on it.
enum Fn : size_t {
  kArgsGet, kArgsSizesGet, kEnvironGet, kEnvironSizesGet, kClockResGet, kClockTimeGet,
  kFdAdvise, kFdAllocate, kFdClose, kFdDatasync, kFdFdstatGet, kFdFdstatSetFlags,
  kFdFdstatSetRights, kFdFilestatGet, kFdFilestatSetSize, kFdFilestatSetTimes, kFdPread,
  kFdPrestatGet, kFdPrestatDirName, kFdPwrite, kFdRead, kFdReaddir, kFdRenumber, kFdSeek,
  kFdSync, kFdTell, kFdWrite, kPathCreateDirectory, kPathFilestatGet, kPathFilestatSetTimes,
  kPathLink, kPathOpen, kPathReadlink, kPathRemoveDirectory, kPathRename, kPathSymlink,
  kPathUnlinkFile, kPollOneoff, kProcExit, kProcRaise, kSchedYield, kRandomGet, kSockAccept,
  kSockRecv, kSockSend, kSockShutdown, kFnCount
};

std::vector<WasiImport> BuildImports() {
  constexpr WasmType I = WasmType::kI32, L = WasmType::kI64;
  std::vector<WasiImport> v = {
      {"args_get", {I, I}, true},
      {"args_sizes_get", {I, I}, true},
      {"environ_get", {I, I}, true},
      {"environ_sizes_get", {I, I}, true},
      {"clock_res_get", {I, I}, true},
      {"clock_time_get", {I, L, I}, true},
      {"fd_advise", {I, L, L, I}, true},
      {"fd_allocate", {I, L, L}, true},
      {"fd_close", {I}, true},
      {"fd_datasync", {I}, true},
      {"fd_fdstat_get", {I, I}, true},
      {"fd_fdstat_set_flags", {I, I}, true},
      {"fd_fdstat_set_rights", {I, L, L}, true},
      {"fd_filestat_get", {I, I}, true},
      {"fd_filestat_set_size", {I, L}, true},
      {"fd_filestat_set_times", {I, L, L, I}, true},
      {"fd_pread", {I, I, I, L, I}, true},
      {"fd_prestat_get", {I, I}, true},
      {"fd_prestat_dir_name", {I, I, I}, true},
      {"fd_pwrite", {I, I, I, L, I}, true},
      {"fd_read", {I, I, I, I}, true},
      {"fd_readdir", {I, I, I, L, I}, true},
      {"fd_renumber", {I, I}, true},
      {"fd_seek", {I, L, I, I}, true},
      {"fd_sync", {I}, true},
      {"fd_tell", {I, I}, true},
      {"fd_write", {I, I, I, I}, true},
      {"path_create_directory", {I, I, I}, true},
      {"path_filestat_get", {I, I, I, I, I}, true},
      {"path_filestat_set_times", {I, I, I, I, L, L, I}, true},
      {"path_link", {I, I, I, I, I, I, I}, true},
      {"path_open", {I, I, I, I, I, L, L, I, I}, true},
      {"path_readlink", {I, I, I, I, I, I}, true},
      {"path_remove_directory", {I, I, I}, true},
      {"path_rename", {I, I, I, I, I, I}, true},
      {"path_symlink", {I, I, I, I, I}, true},
      {"path_unlink_file", {I, I, I}, true},
      {"poll_oneoff", {I, I, I, I}, true},
      {"proc_exit", {I}, false},
      {"proc_raise", {I}, true},
      {"sched_yield", {}, true},
      {"random_get", {I, I}, true},
      {"sock_accept", {I, I, I}, true},
      {"sock_recv", {I, I, I, I, I, I}, true},
      {"sock_send", {I, I, I, I, I}, true},
      {"sock_shutdown", {I, I}, true},
  };
  if (v.size() != kFnCount) std::abort();  // the table and Fn must list the same functions
  return v;
}

uint64_t ClockNs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void HostRandom(std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = getrandom(out.data() + done, out.size() - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::abort();  // no randomness: never hand the guest predictable bytes
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

const std::vector<WasiImport>& WasiContext::Imports() {
  static const std::vector<WasiImport> imports = BuildImports();
  return imports;
}

int WasiContext::ImportIndex(std::string_view name) {
  const auto& imports = Imports();
  for (size_t i = 0; i < imports.size(); ++i) {
    if (name == imports[i].name) return static_cast<int>(i);
  }
  return -1;
}

WasiContext::WasiContext(Vfs& vfs, WasiOptions options) : vfs_(vfs), opts_(std::move(options)) {
  using namespace wasi;
  fds_[0] = Fd{FdKind::kStdin, nullptr, 0, 0, kRightFdRead | kRightPollFdReadwrite, 0, ""};
  fds_[1] = Fd{FdKind::kStdout, nullptr, 0, 0, kRightFdWrite | kRightPollFdReadwrite, 0, ""};
  fds_[2] = Fd{FdKind::kStderr, nullptr, 0, 0, kRightFdWrite | kRightPollFdReadwrite, 0, ""};
  uint32_t next = 3;
  for (const WasiPreopen& p : opts_.preopens) {
    if (!p.dir || !p.dir->is_dir()) continue;
    fds_[next++] = Fd{FdKind::kDir, p.dir, 0, 0, kAllRights, kAllRights, p.guest_path};
  }
  if (opts_.host_stream && (opts_.host_stream->guest_fd == 0 ||
                            (opts_.host_stream->guest_fd >= next && !fds_.count(opts_.host_stream->guest_fd)))) {
    fds_[opts_.host_stream->guest_fd] =
        Fd{FdKind::kHostStream, nullptr, 0, 0, kRightFdRead | kRightFdWrite | kRightPollFdReadwrite, 0, ""};
  }
}

uint32_t WasiContext::Call(std::string_view name, std::span<uint8_t> memory, Args args) {
  int index = ImportIndex(name);
  if (index < 0) return static_cast<uint32_t>(Errno::kNosys);
  return Call(static_cast<size_t>(index), memory, args);
}

uint32_t WasiContext::Call(size_t index, std::span<uint8_t> memory, Args args) {
  if (index >= Imports().size() || args.size() != Imports()[index].params.size()) {
    return static_cast<uint32_t>(Errno::kInval);
  }
  if (exited()) return kStop;
  if (index == kProcExit) {
    exit_code_ = static_cast<uint32_t>(args[0]);
    return kStop;
  }
  GuestMemory mem(memory);
  return static_cast<uint32_t>(Dispatch(index, mem, args));
}

Errno WasiContext::Dispatch(size_t index, GuestMemory& mem, Args a) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(a[i]); };
  switch (static_cast<Fn>(index)) {
    case kArgsGet: return ArgsGet(mem, opts_.args, u(0), u(1));
    case kArgsSizesGet: return SizesGet(mem, opts_.args, u(0), u(1));
    case kEnvironGet: return ArgsGet(mem, opts_.env, u(0), u(1));
    case kEnvironSizesGet: return SizesGet(mem, opts_.env, u(0), u(1));
    case kClockResGet: return ClockResGet(mem, u(0), u(1));
    case kClockTimeGet: return ClockTimeGet(mem, u(0), u(2));
    case kFdAdvise: return GetFd(u(0)) ? Errno::kSuccess : Errno::kBadf;
    case kFdAllocate: return FdAllocate(u(0), a[1], a[2]);
    case kFdClose: return FdClose(u(0));
    case kFdDatasync:
    case kFdSync: return FdSync(u(0));
    case kFdFdstatGet: return FdFdstatGet(mem, u(0), u(1));
    case kFdFdstatSetFlags: return FdFdstatSetFlags(u(0), u(1));
    case kFdFdstatSetRights: return Errno::kNotsup;
    case kFdFilestatGet: return FdFilestatGet(mem, u(0), u(1));
    case kFdFilestatSetSize: return FdFilestatSetSize(u(0), a[1]);
    case kFdFilestatSetTimes: return FdFilestatSetTimes(u(0), a[1], a[2], u(3));
    case kFdPread: return FdRead(mem, u(0), u(1), u(2), &a[3], u(4));
    case kFdPrestatGet: return FdPrestatGet(mem, u(0), u(1));
    case kFdPrestatDirName: return FdPrestatDirName(mem, u(0), u(1), u(2));
    case kFdPwrite: return FdWrite(mem, u(0), u(1), u(2), &a[3], u(4));
    case kFdRead: return FdRead(mem, u(0), u(1), u(2), nullptr, u(3));
    case kFdReaddir: return FdReaddir(mem, u(0), u(1), u(2), a[3], u(4));
    case kFdRenumber: return FdRenumber(u(0), u(1));
    case kFdSeek: return FdSeek(mem, u(0), static_cast<int64_t>(a[1]), u(2), u(3));
    case kFdTell: return FdTell(mem, u(0), u(1));
    case kFdWrite: return FdWrite(mem, u(0), u(1), u(2), nullptr, u(3));
    case kPathCreateDirectory: return PathCreateDirectory(mem, u(0), u(1), u(2));
    case kPathFilestatGet: return PathFilestatGet(mem, u(0), u(2), u(3), u(4));
    case kPathFilestatSetTimes: return PathFilestatSetTimes(mem, u(0), u(2), u(3), a[4], a[5], u(6));
    case kPathLink: return Errno::kNotsup;
    case kPathOpen: return PathOpen(mem, u(0), u(2), u(3), u(4), a[5], a[6], u(7), u(8));
    case kPathReadlink: return PathReadlink(mem, u(0), u(1), u(2));
    case kPathRemoveDirectory: return PathRemove(mem, u(0), u(1), u(2), /*dir=*/true);
    case kPathRename: return PathRename(mem, u(0), u(1), u(2), u(3), u(4), u(5));
    case kPathSymlink: return Errno::kNotsup;
    case kPathUnlinkFile: return PathRemove(mem, u(0), u(1), u(2), /*dir=*/false);
    case kPollOneoff: return PollOneoff(mem, u(0), u(1), u(2), u(3));
    case kProcRaise: return Errno::kNosys;
    case kSchedYield: return Errno::kSuccess;
    case kRandomGet: return RandomGet(mem, u(0), u(1));
    case kSockAccept:
    case kSockRecv:
    case kSockSend:
    case kSockShutdown: return Errno::kNotcapable;
    case kProcExit:
    case kFnCount: break;
  }
  return Errno::kNosys;
}

Errno WasiContext::ArgsGet(GuestMemory& mem, const std::vector<std::string>& list, uint32_t ptrs,
                           uint32_t buf) {
  uint64_t pos = buf;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!mem.Store32(ptrs + 4ull * i, static_cast<uint32_t>(pos))) return Errno::kFault;
    if (!mem.Store(pos, list[i]) || !mem.Store8(pos + list[i].size(), 0)) return Errno::kFault;
    pos += list[i].size() + 1;
  }
  return Errno::kSuccess;
}

Errno WasiContext::SizesGet(GuestMemory& mem, const std::vector<std::string>& list, uint32_t count,
                            uint32_t size) {
  uint64_t bytes = 0;
  for (const std::string& s : list) bytes += s.size() + 1;
  if (!mem.Store32(count, static_cast<uint32_t>(list.size())) || !mem.Store32(size, static_cast<uint32_t>(bytes))) {
    return Errno::kFault;
  }
  return Errno::kSuccess;
}

uint64_t WasiContext::Now(uint32_t clock_id, bool* ok) const {
  const WasiHost& h = opts_.host;
  *ok = true;
  switch (clock_id) {
    case wasi::kClockRealtime: return h.realtime_ns ? h.realtime_ns() : ClockNs(CLOCK_REALTIME);
    case wasi::kClockMonotonic: return h.monotonic_ns ? h.monotonic_ns() : ClockNs(CLOCK_MONOTONIC);
    case wasi::kClockProcessCputime:
      return h.cputime_ns ? h.cputime_ns() : ClockNs(CLOCK_PROCESS_CPUTIME_ID);
    case wasi::kClockThreadCputime:
      return h.cputime_ns ? h.cputime_ns() : ClockNs(CLOCK_THREAD_CPUTIME_ID);
  }
  *ok = false;
  return 0;
}

void WasiContext::Sleep(uint64_t ns) const {
  if (ns == 0) return;
  if (opts_.host.sleep_ns) {
    opts_.host.sleep_ns(ns);
  } else {
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<uint64_t>(ns, INT64_MAX)));
  }
}

Errno WasiContext::ClockResGet(GuestMemory& mem, uint32_t id, uint32_t out) {
  if (id > wasi::kClockThreadCputime) return Errno::kInval;
  return mem.Store64(out, 1000) ? Errno::kSuccess : Errno::kFault;
}

Errno WasiContext::ClockTimeGet(GuestMemory& mem, uint32_t id, uint32_t out) {
  bool ok = false;
  uint64_t now = Now(id, &ok);
  if (!ok) return Errno::kInval;
  return mem.Store64(out, now) ? Errno::kSuccess : Errno::kFault;
}

Errno WasiContext::RandomGet(GuestMemory& mem, uint32_t buf, uint32_t len) {
  bool ok = false;
  std::span<uint8_t> out = mem.Slice(buf, len, &ok);
  if (!ok) return Errno::kFault;
  if (opts_.host.random) {
    opts_.host.random(out);
  } else {
    HostRandom(out);
  }
  return Errno::kSuccess;
}

Errno WasiContext::PollOneoff(GuestMemory& mem, uint32_t in, uint32_t out, uint32_t nsubs,
                              uint32_t nevents) {
  namespace L = wasi_layout;
  if (nsubs == 0) return Errno::kInval;
  if (!mem.InRange(in, uint64_t{nsubs} * kSubscriptionSize) ||
      !mem.InRange(out, uint64_t{nsubs} * kEventSize) || !mem.InRange(nevents, 4)) {
    return Errno::kFault;
  }
  struct Event {
    uint64_t userdata;
    Errno error;
    uint8_t type;
    uint64_t nbytes;
  };
  std::vector<Event> ready;
  std::optional<uint64_t> min_timeout;
  std::vector<std::pair<uint64_t, uint64_t>> clocks;  // userdata, relative timeout
  for (uint32_t i = 0; i < nsubs; ++i) {
    uint64_t sub = in + uint64_t{i} * kSubscriptionSize;
    uint64_t userdata = 0;
    uint8_t tag = 0;
    mem.Load64(sub + L::kSubUserdata, &userdata);
    mem.Load8(sub + L::kSubTag, &tag);
    if (tag == wasi::kEventClock) {
      uint32_t id = 0;
      uint64_t timeout = 0;
      uint16_t flags = 0;
      mem.Load32(sub + L::kSubClockId, &id);
      mem.Load64(sub + L::kSubClockTimeout, &timeout);
      mem.Load16(sub + L::kSubClockFlags, &flags);
      bool ok = false;
      uint64_t now = Now(id, &ok);
      if (!ok) {
        ready.push_back({userdata, Errno::kInval, tag, 0});
        continue;
      }
      uint64_t rel = (flags & wasi::kSubclockAbstime) ? (timeout > now ? timeout - now : 0) : timeout;
      clocks.emplace_back(userdata, rel);
      min_timeout = std::min(min_timeout.value_or(rel), rel);
    } else if (tag == wasi::kEventFdRead || tag == wasi::kEventFdWrite) {
      uint32_t fd = 0;
      mem.Load32(sub + L::kSubFd, &fd);
      Fd* f = GetFd(fd);
      uint64_t nbytes = 0;
      Errno err = Errno::kSuccess;
      if (!f) {
        err = Errno::kBadf;
      } else if (tag == wasi::kEventFdRead) {
        if (f->kind == FdKind::kStdin) {
          nbytes = opts_.stdin_bytes.size() - std::min<uint64_t>(stdin_offset_, opts_.stdin_bytes.size());
        } else if (f->kind == FdKind::kFile) {
          nbytes = f->node->size() > f->offset ? f->node->size() - f->offset : 0;
        } else if (f->kind == FdKind::kHostStream) {
          nbytes = 1;  // a read blocks until the host sends
        } else {
          err = Errno::kBadf;
        }
      } else if (f->kind == FdKind::kDir || f->kind == FdKind::kStdin) {
        err = Errno::kBadf;
      }
      ready.push_back({userdata, err, tag, nbytes});
    } else {
      return Errno::kInval;
    }
  }
  if (ready.empty() && min_timeout) {
    uint64_t wait = *min_timeout;
    if (opts_.deadline_monotonic_ns) {
      bool ok = false;
      uint64_t now = Now(wasi::kClockMonotonic, &ok);
      uint64_t left = *opts_.deadline_monotonic_ns > now ? *opts_.deadline_monotonic_ns - now : 0;
      wait = std::min(wait, left);
    }
    Sleep(wait);
    for (const auto& [userdata, rel] : clocks) {
      if (rel <= *min_timeout) ready.push_back({userdata, Errno::kSuccess, wasi::kEventClock, 0});
    }
  } else {
    for (const auto& [userdata, rel] : clocks) {  // already expired: fire with the fd events
      if (rel == 0) ready.push_back({userdata, Errno::kSuccess, wasi::kEventClock, 0});
    }
  }
  for (size_t i = 0; i < ready.size(); ++i) {
    uint64_t ev = out + i * kEventSize;
    mem.Zero(ev, kEventSize);
    mem.Store64(ev + L::kEventUserdata, ready[i].userdata);
    mem.Store16(ev + L::kEventError, static_cast<uint16_t>(ready[i].error));
    mem.Store8(ev + L::kEventType, ready[i].type);
    mem.Store64(ev + L::kEventNbytes, ready[i].nbytes);
  }
  mem.Store32(nevents, static_cast<uint32_t>(ready.size()));
  return Errno::kSuccess;
}

}  // namespace airlock::wasm
