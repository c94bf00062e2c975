// WasiContext: operations on paths (path_*), resolved in the VFS relative to
// a directory descriptor and never outside it.
#include "wasm/wasi.h"

namespace airlock::wasm {
namespace {

bool IsDot(std::string_view leaf) { return leaf == "." || leaf == ".."; }

constexpr uint64_t kFileRights =
    wasi::kRightFdDatasync | wasi::kRightFdRead | wasi::kRightFdSeek | wasi::kRightFdFdstatSetFlags |
    wasi::kRightFdSync | wasi::kRightFdTell | wasi::kRightFdWrite | wasi::kRightFdAdvise |
    wasi::kRightFdAllocate | wasi::kRightFdFilestatGet | wasi::kRightFdFilestatSetSize |
    wasi::kRightFdFilestatSetTimes | wasi::kRightPollFdReadwrite;

}  // namespace

#define WASI_TRY(expr)                                    \
  do {                                                    \
    if (Errno _e = (expr); _e != Errno::kSuccess) return _e; \
  } while (0)

Errno WasiContext::DirFd(uint32_t fd, Fd** out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  if (f->kind != FdKind::kDir) return Errno::kNotdir;
  *out = f;
  return Errno::kSuccess;
}

Errno WasiContext::DirAndPath(GuestMemory& mem, uint32_t dirfd, uint32_t ptr, uint32_t len, NodePtr* dir,
                              std::string_view* path) {
  Fd* f = nullptr;
  WASI_TRY(DirFd(dirfd, &f));
  if (!mem.LoadString(ptr, len, path)) return Errno::kFault;
  *dir = f->node;
  return Errno::kSuccess;
}

Errno WasiContext::LookupAt(GuestMemory& mem, uint32_t dirfd, uint32_t ptr, uint32_t len, NodePtr* out) {
  NodePtr dir;
  std::string_view path;
  WASI_TRY(DirAndPath(mem, dirfd, ptr, len, &dir, &path));
  return vfs_.Lookup(dir, path, out);
}

Errno WasiContext::ParentAt(GuestMemory& mem, uint32_t dirfd, uint32_t ptr, uint32_t len, PathParent* out) {
  NodePtr dir;
  std::string_view path;
  WASI_TRY(DirAndPath(mem, dirfd, ptr, len, &dir, &path));
  return vfs_.ResolveParent(dir, path, &out->dir, &out->leaf, &out->trailing);
}

Errno WasiContext::PathOpen(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t path_len,
                            uint32_t oflags, uint64_t rights_base, uint64_t rights_inheriting,
                            uint32_t fdflags, uint32_t out) {
  using namespace wasi;
  NodePtr start;  // not an Fd*: that may dangle once a new fd is added
  std::string_view path;
  WASI_TRY(DirAndPath(mem, dirfd, path_ptr, path_len, &start, &path));
  if (!mem.InRange(out, 4)) return Errno::kFault;
  if (oflags > 0xf || fdflags > 0x1f) return Errno::kInval;
  NodePtr parent, node;
  std::string leaf;
  bool trailing = false;
  WASI_TRY(vfs_.ResolveParent(start, path, &parent, &leaf, &trailing));
  if (IsDot(leaf)) {
    WASI_TRY(vfs_.Lookup(start, path, &node));
    if ((oflags & kOflagCreat) && (oflags & kOflagExcl)) return Errno::kExist;
  } else {
    node = parent->Child(leaf);
    if (!node) {
      if (!(oflags & kOflagCreat)) return Errno::kNoent;
      if (trailing || (oflags & kOflagDirectory)) return Errno::kIsdir;
      WASI_TRY(vfs_.CreateFile(parent, leaf, &node));
    } else if ((oflags & kOflagCreat) && (oflags & kOflagExcl)) {
      return Errno::kExist;
    } else if (trailing && !node->is_dir()) {
      return Errno::kNotdir;
    }
  }
  if ((oflags & kOflagDirectory) && !node->is_dir()) return Errno::kNotdir;
  bool wants_write = (rights_base & (kRightFdWrite | kRightFdAllocate | kRightFdFilestatSetSize)) ||
                     (oflags & kOflagTrunc);
  Fd fd;
  if (node->is_dir()) {
    if (wants_write) return Errno::kIsdir;
    fd = Fd{FdKind::kDir, node, 0, static_cast<uint16_t>(fdflags), rights_base & kAllRights,
            rights_inheriting & kAllRights, ""};
  } else {
    if (wants_write && node->read_only()) return Errno::kRofs;
    if (oflags & kOflagTrunc) WASI_TRY(vfs_.Truncate(node, 0));
    fd = Fd{FdKind::kFile, node, 0, static_cast<uint16_t>(fdflags), rights_base & kFileRights, 0, ""};
  }
  uint32_t num = 0;
  WASI_TRY(AllocFd(std::move(fd), &num));
  mem.Store32(out, num);
  return Errno::kSuccess;
}

Errno WasiContext::PathCreateDirectory(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr,
                                       uint32_t len) {
  PathParent at;
  WASI_TRY(ParentAt(mem, dirfd, path_ptr, len, &at));
  if (IsDot(at.leaf)) return Errno::kExist;
  return vfs_.CreateDir(at.dir, at.leaf);
}

Errno WasiContext::PathFilestatGet(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t len,
                                   uint32_t out) {
  NodePtr node;
  WASI_TRY(LookupAt(mem, dirfd, path_ptr, len, &node));
  return WriteFilestat(mem, out, node.get(), node->type());
}

Errno WasiContext::PathFilestatSetTimes(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr,
                                        uint32_t len, uint64_t atim, uint64_t mtim, uint32_t fst) {
  NodePtr node;
  WASI_TRY(LookupAt(mem, dirfd, path_ptr, len, &node));
  return SetTimes(node, atim, mtim, fst);
}

Errno WasiContext::PathReadlink(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t len) {
  NodePtr node;
  WASI_TRY(LookupAt(mem, dirfd, path_ptr, len, &node));
  return Errno::kInval;  // exists, but is not a symlink (there are none)
}

Errno WasiContext::PathRemove(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t len,
                              bool is_dir) {
  PathParent at;
  WASI_TRY(ParentAt(mem, dirfd, path_ptr, len, &at));
  if (at.leaf == ".") return Errno::kInval;
  if (at.leaf == "..") return Errno::kNotempty;
  if (is_dir) return vfs_.RemoveDir(at.dir, at.leaf);
  NodePtr node = at.dir->Child(at.leaf);
  if (node && at.trailing && !node->is_dir()) return Errno::kNotdir;
  return vfs_.UnlinkFile(at.dir, at.leaf);
}

Errno WasiContext::PathRename(GuestMemory& mem, uint32_t old_fd, uint32_t old_ptr, uint32_t old_len,
                              uint32_t new_fd, uint32_t new_ptr, uint32_t new_len) {
  PathParent from, to;
  WASI_TRY(ParentAt(mem, old_fd, old_ptr, old_len, &from));
  WASI_TRY(ParentAt(mem, new_fd, new_ptr, new_len, &to));
  if (IsDot(from.leaf) || IsDot(to.leaf)) return Errno::kInval;
  NodePtr node = from.dir->Child(from.leaf);
  if (!node) return Errno::kNoent;
  if ((from.trailing || to.trailing) && !node->is_dir()) return Errno::kNotdir;
  return vfs_.Rename(from.dir, from.leaf, to.dir, to.leaf);
}

#undef WASI_TRY

}  // namespace airlock::wasm
