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

Errno WasiContext::DirFd(uint32_t fd, Fd** out) {
  Fd* f = GetFd(fd);
  if (!f) return Errno::kBadf;
  if (f->kind != FdKind::kDir) return Errno::kNotdir;
  *out = f;
  return Errno::kSuccess;
}

Errno WasiContext::GuestPath(GuestMemory& mem, uint32_t ptr, uint32_t len, std::string_view* out) {
  return mem.LoadString(ptr, len, out) ? Errno::kSuccess : Errno::kFault;
}

#define WASI_TRY(expr)                                    \
  do {                                                    \
    if (Errno _e = (expr); _e != Errno::kSuccess) return _e; \
  } while (0)

Errno WasiContext::PathOpen(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t path_len,
                            uint32_t oflags, uint64_t rights_base, uint64_t rights_inheriting,
                            uint32_t fdflags, uint32_t out) {
  using namespace wasi;
  Fd* dir = nullptr;
  std::string_view path;
  WASI_TRY(DirFd(dirfd, &dir));
  WASI_TRY(GuestPath(mem, path_ptr, path_len, &path));
  if (!mem.InRange(out, 4)) return Errno::kFault;
  if (oflags > 0xf || fdflags > 0x1f) return Errno::kInval;
  NodePtr start = dir->node;  // `dir` may dangle once a new fd is added
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
  Fd* dir = nullptr;
  std::string_view path;
  WASI_TRY(DirFd(dirfd, &dir));
  WASI_TRY(GuestPath(mem, path_ptr, len, &path));
  NodePtr parent;
  std::string leaf;
  bool trailing = false;
  WASI_TRY(vfs_.ResolveParent(dir->node, path, &parent, &leaf, &trailing));
  if (IsDot(leaf)) return Errno::kExist;
  return vfs_.CreateDir(parent, leaf);
}

Errno WasiContext::PathFilestatGet(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t len,
                                   uint32_t out) {
  Fd* dir = nullptr;
  std::string_view path;
  WASI_TRY(DirFd(dirfd, &dir));
  WASI_TRY(GuestPath(mem, path_ptr, len, &path));
  NodePtr node;
  WASI_TRY(vfs_.Lookup(dir->node, path, &node));
  return WriteFilestat(mem, out, node.get(), node->type());
}

Errno WasiContext::PathFilestatSetTimes(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr,
                                        uint32_t len, uint64_t atim, uint64_t mtim, uint32_t fst) {
  Fd* dir = nullptr;
  std::string_view path;
  WASI_TRY(DirFd(dirfd, &dir));
  WASI_TRY(GuestPath(mem, path_ptr, len, &path));
  NodePtr node;
  WASI_TRY(vfs_.Lookup(dir->node, path, &node));
  return SetTimes(node, atim, mtim, fst);
}

Errno WasiContext::PathReadlink(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t len) {
  Fd* dir = nullptr;
  std::string_view path;
  WASI_TRY(DirFd(dirfd, &dir));
  WASI_TRY(GuestPath(mem, path_ptr, len, &path));
  NodePtr node;
  WASI_TRY(vfs_.Lookup(dir->node, path, &node));
  return Errno::kInval;  // exists, but is not a symlink (there are none)
}

Errno WasiContext::PathRemove(GuestMemory& mem, uint32_t dirfd, uint32_t path_ptr, uint32_t len,
                              bool is_dir) {
  Fd* dir = nullptr;
  std::string_view path;
  WASI_TRY(DirFd(dirfd, &dir));
  WASI_TRY(GuestPath(mem, path_ptr, len, &path));
  NodePtr parent;
  std::string leaf;
  bool trailing = false;
  WASI_TRY(vfs_.ResolveParent(dir->node, path, &parent, &leaf, &trailing));
  if (leaf == ".") return Errno::kInval;
  if (leaf == "..") return Errno::kNotempty;
  if (is_dir) return vfs_.RemoveDir(parent, leaf);
  NodePtr node = parent->Child(leaf);
  if (node && trailing && !node->is_dir()) return Errno::kNotdir;
  return vfs_.UnlinkFile(parent, leaf);
}

Errno WasiContext::PathRename(GuestMemory& mem, uint32_t old_fd, uint32_t old_ptr, uint32_t old_len,
                              uint32_t new_fd, uint32_t new_ptr, uint32_t new_len) {
  Fd *old_dir = nullptr, *new_dir = nullptr;
  std::string_view old_path, new_path;
  WASI_TRY(DirFd(old_fd, &old_dir));
  WASI_TRY(DirFd(new_fd, &new_dir));
  WASI_TRY(GuestPath(mem, old_ptr, old_len, &old_path));
  WASI_TRY(GuestPath(mem, new_ptr, new_len, &new_path));
  NodePtr old_parent, new_parent;
  std::string old_leaf, new_leaf;
  bool old_trailing = false, new_trailing = false;
  WASI_TRY(vfs_.ResolveParent(old_dir->node, old_path, &old_parent, &old_leaf, &old_trailing));
  WASI_TRY(vfs_.ResolveParent(new_dir->node, new_path, &new_parent, &new_leaf, &new_trailing));
  if (IsDot(old_leaf) || IsDot(new_leaf)) return Errno::kInval;
  NodePtr node = old_parent->Child(old_leaf);
  if (!node) return Errno::kNoent;
  if ((old_trailing || new_trailing) && !node->is_dir()) return Errno::kNotdir;
  return vfs_.Rename(old_parent, old_leaf, new_parent, new_leaf);
}

#undef WASI_TRY

}  // namespace airlock::wasm
