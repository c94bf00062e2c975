// An in-memory filesystem for WebAssembly guests (the WASI tier's disk).
//
// A Vfs is a tree of Nodes: directories and regular files only (no symlinks,
// no devices). Nodes are shared (NodePtr): an open file descriptor keeps an
// unlinked file readable and writable until it is closed, as on POSIX.
// Subtrees can be marked read-only (a runtime's stdlib); every mutation of a
// read-only node, or of a read-only directory's entries, fails with EROFS.
// Total file bytes and the number of nodes are capped: growing past the byte
// limit gives ENOSPC, creating past the node limit EDQUOT. Unlinked nodes
// stay charged until the last reference to them goes away.
//
// Guest paths are resolved relative to a directory node and never leave it:
// absolute paths and ".." above the start directory give ENOTCAPABLE (the
// start directory is the capability, as with cap-std/wasmtime); NUL bytes
// give EINVAL. Guest-facing calls return a WASI Errno; host-facing helpers
// (AddFile, MakeDirs, ExportFiles) return Status.
//
//   wasm::Vfs vfs({.max_bytes = 64 << 20, .max_nodes = 10000});
//   AIRLOCK_ASSIGN_OR_RETURN(wasm::NodePtr work, vfs.MakeDirs("work"));
//   AIRLOCK_RETURN_IF_ERROR(vfs.AddFile(work, "input.csv", bytes));
//   ... run the guest with `work` preopened as /work ...
//   AIRLOCK_ASSIGN_OR_RETURN(auto files, wasm::Vfs::ExportFiles(work));
#ifndef AIRLOCK_WASM_VFS_H_
#define AIRLOCK_WASM_VFS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "wasm/wasi_errno.h"

namespace airlock::wasm {

struct VfsLimits {
  uint64_t max_bytes = 64ull << 20;  // sum of all regular files' sizes
  uint64_t max_nodes = 10000;        // files + directories, root included
};

// Bytes and nodes in use; shared by a Vfs and all its nodes so a node
// refunds its charge when it is destroyed, even after the Vfs is gone.
struct VfsUsage {
  VfsLimits limits;
  uint64_t bytes = 0;
  uint64_t nodes = 0;
};

class Node;
using NodePtr = std::shared_ptr<Node>;

class Node {
 public:
  Node(bool is_dir, uint64_t ino, uint64_t now_ns, std::shared_ptr<VfsUsage> usage);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  bool is_dir() const { return is_dir_; }
  bool read_only() const { return read_only_; }
  bool unlinked() const { return unlinked_; }
  uint64_t ino() const { return ino_; }
  uint64_t size() const { return is_dir_ ? children_.size() : data().size(); }
  FileType type() const { return is_dir_ ? FileType::kDirectory : FileType::kRegularFile; }

  // Contents of a regular file (empty for a directory). Valid until the
  // file is next written, truncated or destroyed.
  std::string_view data() const { return backing_ ? view_ : std::string_view(data_); }
  // Entries of a directory, sorted by name (empty for a file).
  const std::map<std::string, NodePtr, std::less<>>& children() const { return children_; }
  NodePtr Child(std::string_view name) const;

  uint64_t atim = 0, mtim = 0, ctim = 0;  // ns since the epoch

 private:
  friend class Vfs;
  const bool is_dir_;
  const uint64_t ino_;
  bool read_only_ = false;
  bool unlinked_ = false;
  // Own contents, or (backing_ set) contents borrowed from a buffer the
  // node keeps alive (Vfs::AddFile with a backing): copied into data_ on
  // the first write.
  std::string data_;
  std::string_view view_;
  std::shared_ptr<const void> backing_;
  std::map<std::string, NodePtr, std::less<>> children_;
  std::shared_ptr<VfsUsage> usage_;
};

// One regular file found by ExportFiles.
struct VfsFile {
  std::string path;  // relative to the exported directory, '/'-separated
  std::string data;
};

class Vfs {
 public:
  // `now_ns` gives the timestamps of created/modified nodes (default: the
  // real-time clock).
  explicit Vfs(VfsLimits limits = {}, std::function<uint64_t()> now_ns = nullptr);

  const NodePtr& root() const { return root_; }
  uint64_t bytes_used() const { return usage_->bytes; }
  uint64_t nodes_used() const { return usage_->nodes; }
  uint64_t NowNs() const { return now_ns_(); }

  // ---- Guest-facing operations (WASI errno results) ----

  // The node at `path` relative to directory `dir`. A trailing '/' requires
  // a directory.
  Errno Lookup(const NodePtr& dir, std::string_view path, NodePtr* out) const;

  // Splits `path` into its parent directory (resolved from `dir`) and final
  // name. `leaf` may be "." or ".." (callers decide what that means);
  // `trailing_slash` tells whether the path ended in '/'.
  Errno ResolveParent(const NodePtr& dir, std::string_view path, NodePtr* parent,
                      std::string* leaf, bool* trailing_slash) const;

  // Entry creation and removal in directory `parent` (names are single
  // components, not "." or "..").
  Errno CreateFile(const NodePtr& parent, std::string_view name, NodePtr* out);
  Errno CreateDir(const NodePtr& parent, std::string_view name, NodePtr* out = nullptr);
  Errno UnlinkFile(const NodePtr& parent, std::string_view name);
  Errno RemoveDir(const NodePtr& parent, std::string_view name);
  // POSIX rename(2) semantics: replaces a file, or an empty directory.
  Errno Rename(const NodePtr& old_parent, std::string_view old_name, const NodePtr& new_parent,
               std::string_view new_name);

  // File contents. Read copies at most `out.size()` bytes from `offset`
  // (0 at or past the end). Write extends the file (zero-filling any gap).
  Errno Read(const NodePtr& file, uint64_t offset, std::span<uint8_t> out, size_t* n) const;
  Errno Write(const NodePtr& file, uint64_t offset, std::string_view bytes);
  Errno Truncate(const NodePtr& file, uint64_t size);
  // Sets atim/mtim; kNow stands for NowNs(), kKeep leaves it unchanged.
  static constexpr uint64_t kKeep = ~0ull, kNow = ~0ull - 1;
  Errno SetTimes(const NodePtr& node, uint64_t atim, uint64_t mtim);

  // ---- Host-facing helpers (Status results) ----

  // Creates every missing directory of `path` (relative to `dir`, default
  // the root) and returns the last one.
  StatusOr<NodePtr> MakeDirs(std::string_view path);
  StatusOr<NodePtr> MakeDirs(const NodePtr& dir, std::string_view path);
  // Adds (or replaces) a regular file, creating its parent directories.
  // With a `backing` (an owner of the buffer `bytes` lies in, such as a
  // read-only mapping of an archive), the file borrows `bytes` instead of
  // copying them, and keeps `backing` alive: many processes mapping one
  // archive then share its pages. Counted against max_bytes all the same.
  Status AddFile(const NodePtr& dir, std::string_view path, std::string_view bytes,
                 std::shared_ptr<const void> backing = nullptr);
  // Marks `node` and everything below it read-only.
  static void SetReadOnly(const NodePtr& node);
  // Every regular file under `dir`, depth-first in name order.
  static StatusOr<std::vector<VfsFile>> ExportFiles(const NodePtr& dir);

 private:
  Errno NewNode(bool is_dir, NodePtr* out);
  // CreateFile and CreateDir: a new file or directory entry in `parent`.
  Errno CreateEntry(const NodePtr& parent, std::string_view name, bool is_dir, NodePtr* out);
  // Whether `grow` more bytes fit under max_bytes.
  bool HasRoom(uint64_t grow) const;
  // Gives a file that borrows its contents its own copy (before a change).
  static void Own(Node& file);
  Errno Resize(Node& file, uint64_t size);
  void Touch(Node& node) const;

  std::shared_ptr<VfsUsage> usage_;
  std::function<uint64_t()> now_ns_;
  uint64_t next_ino_ = 1;
  NodePtr root_;
};

// "Errno 44 (ENOENT)"-style text, for Status messages.
std::string ErrnoName(Errno e);

}  // namespace airlock::wasm

#endif  // AIRLOCK_WASM_VFS_H_
