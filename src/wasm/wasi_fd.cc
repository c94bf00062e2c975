// WasiContext: operations on file descriptors (fd_*).
#include <algorithm>
#include <iterator>

#include "wasm/wasi.h"

namespace airlock::wasm {
namespace {

namespace L = wasi_layout;
constexpr uint32_t kMaxIovs = 1024;

}  // namespace

WasiContext::Fd* WasiContext::GetFd(uint32_t fd) {
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : &it->second;
}

Errno WasiContext::AllocFd(Fd fd, uint32_t* out) {
  if (fds_.size() >= opts_.max_fds) return Errno::kMfile;
  uint32_t n = 3;
  for (const auto& [num, entry] : fds_) {  // lowest free number (the map is sorted)
    if (num < n) continue;
    if (num != n) break;
    ++n;
  }
  fds_[n] = std::move(fd);
  *out = n;
  return Errno::kSuccess;
}

void WasiContext::AppendOutput(WasiOutput& out, uint64_t cap, std::string_view bytes) {
  out.total += bytes.size();
  uint64_t room = cap > out.data.size() ? cap - out.data.size() : 0;
  if (bytes.size() > room) out.truncated = true;
  out.data.append(bytes.substr(0, std::min<uint64_t>(room, bytes.size())));
}

Errno WasiContext::FdClose(uint32_t fd) {
  return fds_.erase(fd) ? Errno::kSuccess : Errno::kBadf;
}

Errno WasiContext::FdSync(uint32_t fd) { return GetFd(fd) ? Errno::kSuccess : Errno::kBadf; }

Errno WasiContext::FdFdstatGet(GuestMemory& mem, uint32_t fd, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  // Stdio reports "unknown" rather than a character device, so guests do
  // not take it for an interactive terminal.
  FileType type = f->node ? f->node->type() : FileType::kUnknown;
  if (!mem.Zero(out, L::kFdstatSize)) return Errno::kFault;
  mem.Store8(out + L::kFdstatType, static_cast<uint8_t>(type));
  mem.Store16(out + L::kFdstatFlags, f->flags);
  mem.Store64(out + L::kFdstatRightsBase, f->rights_base);
  mem.Store64(out + L::kFdstatRightsInheriting, f->rights_inheriting);
  return Errno::kSuccess;
}

Errno WasiContext::FdFdstatSetFlags(uint32_t fd, uint32_t flags) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  if (flags > 0x1f) return Errno::kInval;
  f->flags = static_cast<uint16_t>(flags);
  return Errno::kSuccess;
}

Errno WasiContext::WriteFilestat(GuestMemory& mem, uint32_t out, const Node* node, FileType type) {
  if (!mem.Zero(out, L::kFilestatSize)) return Errno::kFault;
  mem.Store64(out + L::kFilestatDev, 1);
  mem.Store8(out + L::kFilestatType, static_cast<uint8_t>(type));
  if (node) {
    mem.Store64(out + L::kFilestatIno, node->ino());
    mem.Store64(out + L::kFilestatNlink, node->unlinked() ? 0 : 1);
    mem.Store64(out + L::kFilestatSizeField, node->size());
    mem.Store64(out + L::kFilestatAtim, node->atim);
    mem.Store64(out + L::kFilestatMtim, node->mtim);
    mem.Store64(out + L::kFilestatCtim, node->ctim);
  }
  return Errno::kSuccess;
}

Errno WasiContext::FdFilestatGet(GuestMemory& mem, uint32_t fd, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  return WriteFilestat(mem, out, f->node.get(), f->node ? f->node->type() : FileType::kUnknown);
}

Errno WasiContext::FdFilestatSetSize(uint32_t fd, uint64_t size) {
  Fd* f = GetFd(fd);
  if (!f || f->kind != FdKind::kFile || !(f->rights_base & wasi::kRightFdFilestatSetSize)) {
    return f && f->kind == FdKind::kDir ? Errno::kIsdir : Errno::kBadf;
  }
  return vfs_.Truncate(f->node, size);
}

Errno WasiContext::FdAllocate(uint32_t fd, uint64_t offset, uint64_t len) {
  Fd* f = GetFd(fd);
  if (!f || f->kind != FdKind::kFile || !(f->rights_base & wasi::kRightFdAllocate)) return Errno::kBadf;
  if (offset > ~0ull - len) return Errno::kFbig;
  if (offset + len <= f->node->size()) return Errno::kSuccess;
  return vfs_.Truncate(f->node, offset + len);
}

Errno WasiContext::SetTimes(const NodePtr& node, uint64_t atim, uint64_t mtim, uint32_t fst) {
  using namespace wasi;
  if (fst > 0xf || ((fst & kFstflagAtim) && (fst & kFstflagAtimNow)) ||
      ((fst & kFstflagMtim) && (fst & kFstflagMtimNow))) {
    return Errno::kInval;
  }
  uint64_t a = (fst & kFstflagAtimNow) ? Vfs::kNow : (fst & kFstflagAtim) ? atim : Vfs::kKeep;
  uint64_t m = (fst & kFstflagMtimNow) ? Vfs::kNow : (fst & kFstflagMtim) ? mtim : Vfs::kKeep;
  if (a >= Vfs::kNow && (fst & kFstflagAtim)) return Errno::kInval;  // reserved values
  if (m >= Vfs::kNow && (fst & kFstflagMtim)) return Errno::kInval;
  return vfs_.SetTimes(node, a, m);
}

Errno WasiContext::FdFilestatSetTimes(uint32_t fd, uint64_t atim, uint64_t mtim, uint32_t fst) {
  Fd* f = GetFd(fd);
  if (!f || !f->node) return Errno::kBadf;
  return SetTimes(f->node, atim, mtim, fst);
}

Errno WasiContext::FdRead(GuestMemory& mem, uint32_t fd, uint32_t iovs, uint32_t n,
                          const uint64_t* offset, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  if (f->kind == FdKind::kDir) return Errno::kIsdir;
  if (f->kind == FdKind::kStdout || f->kind == FdKind::kStderr) return Errno::kBadf;
  if (f->kind == FdKind::kFile && !(f->rights_base & wasi::kRightFdRead)) return Errno::kBadf;
  if (offset && f->kind == FdKind::kStdin) return Errno::kSpipe;
  if (n > kMaxIovs) return Errno::kInval;
  if (!mem.InRange(iovs, uint64_t{n} * L::kIovecSize) || !mem.InRange(out, 4)) return Errno::kFault;
  if (f->kind == FdKind::kHostStream) {
    if (offset) return Errno::kSpipe;
    // One read into the first non-empty buffer (a short read, as a pipe's).
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t buf = 0, len = 0;
      mem.Load32(iovs + uint64_t{i} * L::kIovecSize, &buf);
      mem.Load32(iovs + uint64_t{i} * L::kIovecSize + 4, &len);
      if (len == 0) continue;
      bool ok = false;
      std::span<uint8_t> dst = mem.Slice(buf, len, &ok);
      if (!ok) return Errno::kFault;
      size_t got = 0;
      if (Errno e = opts_.host_stream->read(dst, &got); e != Errno::kSuccess) return e;
      mem.Store32(out, static_cast<uint32_t>(got));
      return Errno::kSuccess;
    }
    mem.Store32(out, 0);
    return Errno::kSuccess;
  }
  if (f->kind == FdKind::kStdin && opts_.stdin_source) {
    opts_.stdin_bytes = opts_.stdin_source();
    opts_.stdin_source = nullptr;
  }
  uint64_t pos = offset ? *offset : f->kind == FdKind::kStdin ? stdin_offset_ : f->offset;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t buf = 0, len = 0;
    mem.Load32(iovs + uint64_t{i} * L::kIovecSize, &buf);
    mem.Load32(iovs + uint64_t{i} * L::kIovecSize + 4, &len);
    bool ok = false;
    std::span<uint8_t> dst = mem.Slice(buf, len, &ok);
    if (!ok) return Errno::kFault;
    size_t got = 0;
    if (f->kind == FdKind::kStdin) {
      const std::string& in = opts_.stdin_bytes;
      got = pos < in.size() ? std::min<uint64_t>(len, in.size() - pos) : 0;
      if (got) std::memcpy(dst.data(), in.data() + pos, got);
    } else if (Errno e = vfs_.Read(f->node, pos, dst, &got); e != Errno::kSuccess) {
      return e;
    }
    pos += got;
    total += got;
    if (got < len) break;
  }
  if (!offset) (f->kind == FdKind::kStdin ? stdin_offset_ : f->offset) = pos;
  mem.Store32(out, static_cast<uint32_t>(total));
  return Errno::kSuccess;
}

Errno WasiContext::FdWrite(GuestMemory& mem, uint32_t fd, uint32_t iovs, uint32_t n,
                           const uint64_t* offset, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  if (f->kind == FdKind::kStdin || f->kind == FdKind::kDir) return Errno::kBadf;
  if (f->kind == FdKind::kFile && !(f->rights_base & wasi::kRightFdWrite)) return Errno::kBadf;
  bool stream = f->kind == FdKind::kStdout || f->kind == FdKind::kStderr || f->kind == FdKind::kHostStream;
  if (offset && stream) return Errno::kSpipe;
  if (n > kMaxIovs) return Errno::kInval;
  if (!mem.InRange(iovs, uint64_t{n} * L::kIovecSize) || !mem.InRange(out, 4)) return Errno::kFault;
  for (uint32_t i = 0; i < n; ++i) {  // validate every buffer before writing anything
    uint32_t buf = 0, len = 0;
    mem.Load32(iovs + uint64_t{i} * L::kIovecSize, &buf);
    mem.Load32(iovs + uint64_t{i} * L::kIovecSize + 4, &len);
    if (!mem.InRange(buf, len)) return Errno::kFault;
  }
  uint64_t pos = 0;
  if (!stream) pos = offset ? *offset : (f->flags & wasi::kFdflagAppend) ? f->node->size() : f->offset;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t buf = 0, len = 0;
    mem.Load32(iovs + uint64_t{i} * L::kIovecSize, &buf);
    mem.Load32(iovs + uint64_t{i} * L::kIovecSize + 4, &len);
    std::string_view bytes;
    mem.LoadString(buf, len, &bytes);
    if (f->kind == FdKind::kHostStream) {
      if (Errno e = opts_.host_stream->write(bytes); e != Errno::kSuccess) {
        if (total == 0) return e;
        break;
      }
    } else if (stream) {
      int which = f->kind == FdKind::kStdout ? 0 : 1;
      if (opts_.output_sink) {
        out_[which].total += bytes.size();
        opts_.output_sink(which + 1, bytes);
      } else {
        AppendOutput(out_[which], which == 0 ? opts_.stdout_cap : opts_.stderr_cap, bytes);
      }
    } else if (Errno e = vfs_.Write(f->node, pos, bytes); e != Errno::kSuccess) {
      if (total == 0) return e;
      break;  // a short write, as POSIX reports a partial success
    }
    pos += len;
    total += len;
  }
  if (!stream && !offset) f->offset = pos;
  mem.Store32(out, static_cast<uint32_t>(total));
  return Errno::kSuccess;
}

Errno WasiContext::FdPrestatGet(GuestMemory& mem, uint32_t fd, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f || f->preopen_path.empty()) return Errno::kBadf;
  if (!mem.Zero(out, L::kPrestatSize)) return Errno::kFault;
  mem.Store8(out + L::kPrestatTag, 0);
  mem.Store32(out + L::kPrestatNameLen, static_cast<uint32_t>(f->preopen_path.size()));
  return Errno::kSuccess;
}

Errno WasiContext::FdPrestatDirName(GuestMemory& mem, uint32_t fd, uint32_t path, uint32_t len) {
  Fd* f = GetFd(fd);
  if (!f || f->preopen_path.empty()) return Errno::kBadf;
  if (len < f->preopen_path.size()) return Errno::kNametoolong;
  return mem.Store(path, f->preopen_path) ? Errno::kSuccess : Errno::kFault;
}

Errno WasiContext::FdReaddir(GuestMemory& mem, uint32_t fd, uint32_t buf, uint32_t len,
                             uint64_t cookie, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  if (f->kind != FdKind::kDir) return Errno::kNotdir;
  if (!(f->rights_base & wasi::kRightFdReaddir)) return Errno::kBadf;
  if (!mem.InRange(buf, len) || !mem.InRange(out, 4)) return Errno::kFault;
  // Entries are ".", "..", then the children in name order. d_next is 1
  // after ".", 2 after "..", and after a child the cookie this descriptor
  // gave its name (DirCookies), so a listing resumes after that name.
  std::string bytes;
  auto emit = [&](std::string_view name, uint64_t next, uint64_t ino, FileType type) {
    char header[L::kDirentSize] = {};
    auto put = [&](uint32_t at, uint64_t v, int n) {
      for (int i = 0; i < n; ++i) header[at + i] = static_cast<char>(v >> (8 * i));
    };
    put(L::kDirentNext, next, 8);
    put(L::kDirentIno, ino, 8);
    put(L::kDirentNamlen, name.size(), 4);
    put(L::kDirentType, static_cast<uint8_t>(type), 1);
    bytes.append(header, sizeof(header));
    bytes.append(name);
  };
  DirCookies& dc = f->cookies;
  auto cookie_of = [&dc](const std::string& name) {
    if (dc.names.size() >= DirCookies::kMaxDirCookies) {
      dc.base += dc.names.size();
      dc.names.clear();
      dc.of.clear();
    }
    auto [it, added] = dc.of.try_emplace(name, dc.base + dc.names.size());
    if (added) dc.names.push_back(name);
    return it->second;
  };
  const Node& dir = *f->node;
  const auto& children = dir.children();
  auto it = children.begin();
  if (cookie == 0) emit(".", 1, dir.ino(), FileType::kDirectory);
  if (cookie <= 1) emit("..", 2, dir.ino(), FileType::kDirectory);
  if (cookie >= dc.base && cookie - dc.base < dc.names.size()) {
    it = children.upper_bound(dc.names[cookie - dc.base]);
  } else if (cookie > 2) {  // not one of ours (any more): the entry's index
    std::advance(it, std::min<uint64_t>(cookie - 2, children.size()));
  }
  for (; it != children.end() && bytes.size() < len; ++it) {
    emit(it->first, cookie_of(it->first), it->second->ino(), it->second->type());
  }
  uint32_t used = static_cast<uint32_t>(std::min<uint64_t>(bytes.size(), len));
  mem.Store(buf, std::string_view(bytes).substr(0, used));
  mem.Store32(out, used);
  return Errno::kSuccess;
}

Errno WasiContext::FdRenumber(uint32_t from, uint32_t to) {
  Fd* src = GetFd(from);
  if (!src || !GetFd(to)) return Errno::kBadf;
  if (from == to) return Errno::kSuccess;
  fds_[to] = std::move(*src);
  fds_.erase(from);
  return Errno::kSuccess;
}

Errno WasiContext::FdSeek(GuestMemory& mem, uint32_t fd, int64_t offset, uint32_t whence, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  if (f->kind == FdKind::kDir) return Errno::kBadf;
  if (f->kind != FdKind::kFile) return Errno::kSpipe;
  if (!mem.InRange(out, 8)) return Errno::kFault;
  int64_t base = 0;
  switch (whence) {
    case wasi::kWhenceSet: base = 0; break;
    case wasi::kWhenceCur: base = static_cast<int64_t>(f->offset); break;
    case wasi::kWhenceEnd: base = static_cast<int64_t>(f->node->size()); break;
    default: return Errno::kInval;
  }
  int64_t pos = 0;
  if (__builtin_add_overflow(base, offset, &pos) || pos < 0) return Errno::kInval;
  f->offset = static_cast<uint64_t>(pos);
  mem.Store64(out, f->offset);
  return Errno::kSuccess;
}

Errno WasiContext::FdTell(GuestMemory& mem, uint32_t fd, uint32_t out) {
  Fd* f = GetFd(fd);
  if (!f || f->kind == FdKind::kDir) return Errno::kBadf;
  if (f->kind != FdKind::kFile) return Errno::kSpipe;
  return mem.Store64(out, f->offset) ? Errno::kSuccess : Errno::kFault;
}

}  // namespace airlock::wasm
