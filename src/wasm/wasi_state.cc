// WasiContext::SaveState and LoadState (wasi.h): the host's half of a
// paused session's image.
#include <map>
#include <string>
#include <vector>

#include "wasm/session_image.h"
#include "wasm/wasi.h"

namespace airlock::wasm {
namespace {

constexpr uint64_t kVersion = 1;
enum : uint64_t { kRefNone = 0, kRefPath = 1, kRefOrphan = 2 };
enum : uint64_t { kNodeDir = 0, kNodeFile = 1 };

// Preorder: every node under `dir` with its path from the root; `writable`
// gets those that are not read-only (a read-only directory's subtree is
// all read-only and not descended into for it).
void Walk(const NodePtr& dir, const std::string& prefix, std::vector<std::pair<std::string, NodePtr>>* writable,
          std::map<const Node*, std::string>* paths) {
  for (const auto& [name, child] : dir->children()) {
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    (*paths)[child.get()] = path;
    if (!child->read_only()) writable->emplace_back(path, child);
    if (child->is_dir()) Walk(child, path, writable, paths);
  }
}

void PutTimes(ImageWriter& w, const Node& n) {
  w.U64(n.atim);
  w.U64(n.mtim);
  w.U64(n.ctim);
}

struct Times {
  uint64_t atim = 0, mtim = 0, ctim = 0;
  void SetOn(Node& n) const {
    n.atim = atim;
    n.mtim = mtim;
    n.ctim = ctim;
  }
};

bool GetTimes(ImageReader& r, Times& t) { return r.U64(&t.atim) && r.U64(&t.mtim) && r.U64(&t.ctim); }

Status Damaged(const std::string& what) { return InvalidArgument("the session's WASI state is damaged: " + what); }

}  // namespace

std::string WasiContext::SaveState() const {
  std::vector<std::pair<std::string, NodePtr>> writable;
  std::map<const Node*, std::string> paths;
  Walk(vfs_.root(), "", &writable, &paths);
  ImageWriter w;
  w.U64(kVersion);
  w.U64(stdin_offset_);
  w.U64(writable.size());
  for (const auto& [path, node] : writable) {
    w.U64(node->is_dir() ? kNodeDir : kNodeFile);
    w.Bytes(path);
    PutTimes(w, *node);
    if (!node->is_dir()) w.Bytes(node->data());
  }
  w.U64(fds_.size());
  for (const auto& [number, fd] : fds_) {
    w.U64(number);
    w.U64(static_cast<uint64_t>(fd.kind));
    w.U64(fd.offset);
    w.U64(fd.flags);
    w.U64(fd.rights_base);
    w.U64(fd.rights_inheriting);
    w.Bytes(fd.preopen_path);
    auto it = fd.node ? paths.find(fd.node.get()) : paths.end();
    if (!fd.node) {
      w.U64(kRefNone);
    } else if (it != paths.end() && !fd.node->unlinked()) {
      w.U64(kRefPath);
      w.Bytes(it->second);
    } else if (fd.node == vfs_.root()) {
      w.U64(kRefPath);
      w.Bytes("");
    } else {
      // Open but unlinked (a temporary file): its contents travel with it.
      // An unlinked directory is empty by definition.
      w.U64(kRefOrphan);
      w.U64(fd.node->is_dir() ? kNodeDir : kNodeFile);
      w.Bytes(fd.node->data());
      PutTimes(w, *fd.node);
    }
  }
  return std::move(w.out());
}

Status WasiContext::LoadState(std::string_view state) {
  ImageReader r(state);
  uint64_t version = 0, count = 0;
  if (!r.U64(&version) || version != kVersion) return Damaged("unknown version");
  if (!r.U64(&stdin_offset_)) return Damaged("stdin");
  if (!r.U64(&count)) return Damaged("node count");
  const NodePtr& root = vfs_.root();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t kind = 0;
    std::string_view path, data;
    Times times;
    if (!r.U64(&kind) || kind > kNodeFile || !r.Bytes(&path) || path.empty() || !GetTimes(r, times)) {
      return Damaged("node");
    }
    if (kind == kNodeFile) {
      if (!r.Bytes(&data)) return Damaged("file");
      AIRLOCK_RETURN_IF_ERROR(vfs_.AddFile(root, path, data));
    } else {
      AIRLOCK_RETURN_IF_ERROR(vfs_.MakeDirs(root, path).status());
    }
    NodePtr node;
    if (vfs_.Lookup(root, path, &node) != Errno::kSuccess || node->read_only()) {
      return Damaged("node " + std::string(path) + " is not writable here");
    }
    times.SetOn(*node);
  }
  if (!r.U64(&count) || count > opts_.max_fds + 1) return Damaged("descriptor count");
  std::map<uint32_t, Fd> fds;
  uint64_t orphans = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t number = 0, kind = 0, ref = 0;
    Fd fd{FdKind::kStdin, nullptr};
    uint64_t flags = 0;
    std::string_view preopen;
    if (!r.U64(&number) || number > 0xffffffffull || !r.U64(&kind) ||
        kind > static_cast<uint64_t>(FdKind::kHostStream) || !r.U64(&fd.offset) || !r.U64(&flags) ||
        flags > 0xffff || !r.U64(&fd.rights_base) || !r.U64(&fd.rights_inheriting) || !r.Bytes(&preopen) ||
        !r.U64(&ref)) {
      return Damaged("descriptor");
    }
    fd.kind = static_cast<FdKind>(kind);
    fd.flags = static_cast<uint16_t>(flags);
    fd.preopen_path = std::string(preopen);
    if (fd.kind == FdKind::kHostStream &&
        (!opts_.host_stream || opts_.host_stream->guest_fd != number)) {
      return Damaged("a control descriptor this engine was not given");
    }
    if (ref == kRefPath) {
      std::string_view path;
      if (!r.Bytes(&path)) return Damaged("descriptor path");
      if (path.empty()) {
        fd.node = root;
      } else if (vfs_.Lookup(root, path, &fd.node) != Errno::kSuccess) {
        return Damaged("descriptor " + std::to_string(number) + " names " + std::string(path) + ", not here");
      }
    } else if (ref == kRefOrphan) {
      uint64_t node_kind = 0;
      std::string_view data;
      Times times;
      if (!r.U64(&node_kind) || node_kind > kNodeFile || !r.Bytes(&data) || !GetTimes(r, times)) {
        return Damaged("unlinked file");
      }
      // Made under a name of its own, then unlinked again: charged to the
      // filesystem's limits like any file, referenced by its descriptor only.
      const std::string name = ".airlock-unlinked-" + std::to_string(orphans++);
      Errno e = node_kind == kNodeDir ? vfs_.CreateDir(root, name, &fd.node) : vfs_.CreateFile(root, name, &fd.node);
      if (e == Errno::kSuccess && node_kind == kNodeFile) e = vfs_.Write(fd.node, 0, data);
      if (e == Errno::kSuccess) e = node_kind == kNodeDir ? vfs_.RemoveDir(root, name) : vfs_.UnlinkFile(root, name);
      if (e != Errno::kSuccess) return FailedPrecondition("restoring an unlinked file: " + ErrnoName(e));
      times.SetOn(*fd.node);
    } else if (ref != kRefNone) {
      return Damaged("descriptor reference");
    }
    const bool needs_node = fd.kind == FdKind::kFile || fd.kind == FdKind::kDir;
    if (needs_node != static_cast<bool>(fd.node) || (fd.kind == FdKind::kDir && !fd.node->is_dir()) ||
        (fd.kind == FdKind::kFile && fd.node->is_dir())) {
      return Damaged("descriptor " + std::to_string(number) + " and its node disagree");
    }
    fds[static_cast<uint32_t>(number)] = std::move(fd);
  }
  if (!r.done()) return Damaged("trailing bytes");
  fds_ = std::move(fds);
  return OkStatus();
}

}  // namespace airlock::wasm
