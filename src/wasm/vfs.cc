#include "wasm/vfs.h"

#include <chrono>
#include <cstring>

namespace airlock::wasm {
namespace {

constexpr size_t kMaxPathBytes = 4096;
constexpr size_t kMaxNameBytes = 255;

uint64_t RealtimeNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Splits on '/', dropping empty components.
std::vector<std::string_view> Components(std::string_view path) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    if (end > pos) out.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

Errno CheckPath(std::string_view path) {
  if (path.empty()) return Errno::kNoent;
  if (path.size() > kMaxPathBytes) return Errno::kNametoolong;
  if (path.find('\0') != std::string_view::npos) return Errno::kInval;
  if (path.front() == '/') return Errno::kNotcapable;
  return Errno::kSuccess;
}

Errno CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return Errno::kInval;
  }
  if (name.size() > kMaxNameBytes) return Errno::kNametoolong;
  return Errno::kSuccess;
}

// Walks `parts` from `start`; ".." pops but never above `start`.
Errno Walk(const NodePtr& start, const std::vector<std::string_view>& parts, NodePtr* out) {
  std::vector<NodePtr> stack{start};
  for (std::string_view part : parts) {
    const NodePtr& cur = stack.back();
    if (!cur->is_dir()) return Errno::kNotdir;
    if (part == ".") continue;
    if (part == "..") {
      if (stack.size() == 1) return Errno::kNotcapable;
      stack.pop_back();
      continue;
    }
    if (part.size() > kMaxNameBytes) return Errno::kNametoolong;
    NodePtr next = cur->Child(part);
    if (!next) return Errno::kNoent;
    stack.push_back(std::move(next));
  }
  *out = stack.back();
  return Errno::kSuccess;
}

bool Contains(const Node& tree, const Node* target) {
  if (&tree == target) return true;
  for (const auto& [name, child] : tree.children()) {
    if (child->is_dir() && Contains(*child, target)) return true;
  }
  return false;
}

void ExportInto(const NodePtr& dir, const std::string& prefix, std::vector<VfsFile>* out) {
  for (const auto& [name, child] : dir->children()) {
    std::string path = prefix.empty() ? name : prefix + "/" + name;
    if (child->is_dir()) {
      ExportInto(child, path, out);
    } else {
      out->push_back({std::move(path), std::string(child->data())});
    }
  }
}

}  // namespace

std::string ErrnoName(Errno e) { return "WASI errno " + std::to_string(static_cast<int>(e)); }

Node::Node(bool is_dir, uint64_t ino, uint64_t now_ns, std::shared_ptr<VfsUsage> usage)
    : atim(now_ns), mtim(now_ns), ctim(now_ns), is_dir_(is_dir), ino_(ino), usage_(std::move(usage)) {
  usage_->nodes++;
}

Node::~Node() {
  usage_->nodes--;
  usage_->bytes -= data().size();
}

NodePtr Node::Child(std::string_view name) const {
  auto it = children_.find(name);
  return it == children_.end() ? nullptr : it->second;
}

Vfs::Vfs(VfsLimits limits, std::function<uint64_t()> now_ns)
    : usage_(std::make_shared<VfsUsage>()), now_ns_(now_ns ? std::move(now_ns) : RealtimeNs) {
  usage_->limits = limits;
  root_ = std::make_shared<Node>(true, next_ino_++, now_ns_(), usage_);
}

Errno Vfs::Lookup(const NodePtr& dir, std::string_view path, NodePtr* out) const {
  if (Errno e = CheckPath(path); e != Errno::kSuccess) return e;
  NodePtr node;
  if (Errno e = Walk(dir, Components(path), &node); e != Errno::kSuccess) return e;
  if (path.back() == '/' && !node->is_dir()) return Errno::kNotdir;
  *out = std::move(node);
  return Errno::kSuccess;
}

Errno Vfs::ResolveParent(const NodePtr& dir, std::string_view path, NodePtr* parent,
                         std::string* leaf, bool* trailing_slash) const {
  if (Errno e = CheckPath(path); e != Errno::kSuccess) return e;
  std::vector<std::string_view> parts = Components(path);
  if (parts.empty()) return Errno::kNoent;
  std::string_view last = parts.back();
  parts.pop_back();
  NodePtr node;
  if (Errno e = Walk(dir, parts, &node); e != Errno::kSuccess) return e;
  if (!node->is_dir()) return Errno::kNotdir;
  if (last.size() > kMaxNameBytes) return Errno::kNametoolong;
  *parent = std::move(node);
  *leaf = std::string(last);
  *trailing_slash = path.back() == '/';
  return Errno::kSuccess;
}

Errno Vfs::NewNode(bool is_dir, NodePtr* out) {
  if (usage_->nodes >= usage_->limits.max_nodes) return Errno::kDquot;
  *out = std::make_shared<Node>(is_dir, next_ino_++, now_ns_(), usage_);
  return Errno::kSuccess;
}

void Vfs::Touch(Node& node) const {
  node.mtim = now_ns_();
  node.ctim = node.mtim;
}

Errno Vfs::CreateEntry(const NodePtr& parent, std::string_view name, bool is_dir, NodePtr* out) {
  if (Errno e = CheckName(name); e != Errno::kSuccess) return e;
  if (!parent->is_dir()) return Errno::kNotdir;
  if (parent->unlinked_) return Errno::kNoent;
  if (parent->Child(name)) return Errno::kExist;
  if (parent->read_only_) return Errno::kRofs;
  NodePtr node;
  if (Errno e = NewNode(is_dir, &node); e != Errno::kSuccess) return e;
  parent->children_.emplace(std::string(name), node);
  Touch(*parent);
  if (out) *out = std::move(node);
  return Errno::kSuccess;
}

Errno Vfs::CreateFile(const NodePtr& parent, std::string_view name, NodePtr* out) {
  return CreateEntry(parent, name, /*is_dir=*/false, out);
}

Errno Vfs::CreateDir(const NodePtr& parent, std::string_view name, NodePtr* out) {
  return CreateEntry(parent, name, /*is_dir=*/true, out);
}

Errno Vfs::UnlinkFile(const NodePtr& parent, std::string_view name) {
  if (Errno e = CheckName(name); e != Errno::kSuccess) return e;
  NodePtr node = parent->Child(name);
  if (!node) return Errno::kNoent;
  if (node->is_dir()) return Errno::kIsdir;
  if (parent->read_only_) return Errno::kRofs;
  node->unlinked_ = true;
  parent->children_.erase(parent->children_.find(name));
  Touch(*parent);
  return Errno::kSuccess;
}

Errno Vfs::RemoveDir(const NodePtr& parent, std::string_view name) {
  if (Errno e = CheckName(name); e != Errno::kSuccess) return e;
  NodePtr node = parent->Child(name);
  if (!node) return Errno::kNoent;
  if (!node->is_dir()) return Errno::kNotdir;
  if (!node->children_.empty()) return Errno::kNotempty;
  if (parent->read_only_) return Errno::kRofs;
  node->unlinked_ = true;
  parent->children_.erase(parent->children_.find(name));
  Touch(*parent);
  return Errno::kSuccess;
}

Errno Vfs::Rename(const NodePtr& old_parent, std::string_view old_name, const NodePtr& new_parent,
                  std::string_view new_name) {
  if (Errno e = CheckName(old_name); e != Errno::kSuccess) return e;
  if (Errno e = CheckName(new_name); e != Errno::kSuccess) return e;
  if (!old_parent->is_dir() || !new_parent->is_dir()) return Errno::kNotdir;
  NodePtr node = old_parent->Child(old_name);
  if (!node) return Errno::kNoent;
  if (new_parent->unlinked_) return Errno::kNoent;
  if (old_parent->read_only_ || new_parent->read_only_) return Errno::kRofs;
  NodePtr target = new_parent->Child(new_name);
  if (target == node) return Errno::kSuccess;
  if (node->is_dir() && Contains(*node, new_parent.get())) return Errno::kInval;
  if (target) {
    if (node->is_dir() && !target->is_dir()) return Errno::kNotdir;
    if (!node->is_dir() && target->is_dir()) return Errno::kIsdir;
    if (target->is_dir() && !target->children_.empty()) return Errno::kNotempty;
    target->unlinked_ = true;
  }
  old_parent->children_.erase(old_parent->children_.find(old_name));
  new_parent->children_[std::string(new_name)] = node;
  Touch(*old_parent);
  Touch(*new_parent);
  node->ctim = now_ns_();
  return Errno::kSuccess;
}

Errno Vfs::Read(const NodePtr& file, uint64_t offset, std::span<uint8_t> out, size_t* n) const {
  if (file->is_dir()) return Errno::kIsdir;
  *n = 0;
  const std::string_view data = file->data();
  if (offset >= data.size()) return Errno::kSuccess;
  size_t count = std::min<uint64_t>(out.size(), data.size() - offset);
  if (count > 0) std::memcpy(out.data(), data.data() + offset, count);
  *n = count;
  return Errno::kSuccess;
}

bool Vfs::HasRoom(uint64_t grow) const {
  return grow <= usage_->limits.max_bytes && usage_->bytes <= usage_->limits.max_bytes - grow;
}

void Vfs::Own(Node& file) {
  if (!file.backing_) return;
  file.data_.assign(file.view_);  // same size: the charge does not change
  file.view_ = {};
  file.backing_.reset();
}

Errno Vfs::Resize(Node& file, uint64_t size) {
  Own(file);
  uint64_t old = file.data_.size();
  if (size > old && !HasRoom(size - old)) return Errno::kNospc;
  file.data_.resize(size);
  usage_->bytes = usage_->bytes - old + size;
  return Errno::kSuccess;
}

Errno Vfs::Write(const NodePtr& file, uint64_t offset, std::string_view bytes) {
  if (file->is_dir()) return Errno::kIsdir;
  if (file->read_only_) return Errno::kRofs;
  if (bytes.empty()) return Errno::kSuccess;
  if (offset > ~0ull - bytes.size()) return Errno::kFbig;
  uint64_t end = offset + bytes.size();
  Own(*file);
  if (end > file->data_.size()) {
    if (Errno e = Resize(*file, end); e != Errno::kSuccess) return e;
  }
  std::memcpy(file->data_.data() + offset, bytes.data(), bytes.size());
  Touch(*file);
  return Errno::kSuccess;
}

Errno Vfs::Truncate(const NodePtr& file, uint64_t size) {
  if (file->is_dir()) return Errno::kIsdir;
  if (file->read_only_) return Errno::kRofs;
  if (Errno e = Resize(*file, size); e != Errno::kSuccess) return e;
  Touch(*file);
  return Errno::kSuccess;
}

Errno Vfs::SetTimes(const NodePtr& node, uint64_t atim, uint64_t mtim) {
  if (node->read_only_) return Errno::kRofs;
  uint64_t now = now_ns_();
  if (atim != kKeep) node->atim = atim == kNow ? now : atim;
  if (mtim != kKeep) node->mtim = mtim == kNow ? now : mtim;
  node->ctim = now;
  return Errno::kSuccess;
}

StatusOr<NodePtr> Vfs::MakeDirs(std::string_view path) { return MakeDirs(root_, path); }

StatusOr<NodePtr> Vfs::MakeDirs(const NodePtr& dir, std::string_view path) {
  NodePtr cur = dir;
  for (std::string_view part : Components(path)) {
    if (part == ".") continue;
    if (CheckName(part) != Errno::kSuccess) {
      return InvalidArgument("bad path component in '" + std::string(path) + "'");
    }
    NodePtr next = cur->Child(part);
    if (!next) {
      if (cur->read_only_) return PermissionDenied("read-only directory in '" + std::string(path) + "'");
      if (Errno e = CreateDir(cur, part, &next); e != Errno::kSuccess) {
        return ResourceExhausted("cannot create '" + std::string(path) + "': " + ErrnoName(e));
      }
    } else if (!next->is_dir()) {
      return InvalidArgument("'" + std::string(part) + "' is not a directory");
    }
    cur = std::move(next);
  }
  return cur;
}

Status Vfs::AddFile(const NodePtr& dir, std::string_view path, std::string_view bytes,
                    std::shared_ptr<const void> backing) {
  std::vector<std::string_view> parts = Components(path);
  if (parts.empty()) return InvalidArgument("empty file path");
  std::string_view name = parts.back();
  if (CheckName(name) != Errno::kSuccess) return InvalidArgument("bad file name '" + std::string(path) + "'");
  AIRLOCK_ASSIGN_OR_RETURN(NodePtr parent,
                           MakeDirs(dir, path.substr(0, path.size() - name.size())));
  if (parent->read_only_) return PermissionDenied("read-only directory for '" + std::string(path) + "'");
  NodePtr file = parent->Child(name);
  if (file && file->is_dir()) return InvalidArgument("'" + std::string(path) + "' is a directory");
  bool created = !file;
  if (!file) {
    if (Errno e = CreateFile(parent, name, &file); e != Errno::kSuccess) {
      return ResourceExhausted("cannot create '" + std::string(path) + "': " + ErrnoName(e));
    }
  }
  if (file->read_only_) return PermissionDenied("'" + std::string(path) + "' is read-only");
  if (Errno e = Resize(*file, backing ? 0 : bytes.size()); e != Errno::kSuccess) {
    if (created) UnlinkFile(parent, name);
    return ResourceExhausted("no space for '" + std::string(path) + "'");
  }
  if (backing) {
    // Charged as if copied: the limits do not depend on how it is stored.
    if (!HasRoom(bytes.size())) {
      if (created) UnlinkFile(parent, name);
      return ResourceExhausted("no space for '" + std::string(path) + "'");
    }
    usage_->bytes += bytes.size();
    file->view_ = bytes;
    file->backing_ = std::move(backing);
  } else if (!bytes.empty()) {
    std::memcpy(file->data_.data(), bytes.data(), bytes.size());
  }
  Touch(*file);
  return OkStatus();
}

void Vfs::SetReadOnly(const NodePtr& node) {
  node->read_only_ = true;
  for (const auto& [name, child] : node->children_) SetReadOnly(child);
}

StatusOr<std::vector<VfsFile>> Vfs::ExportFiles(const NodePtr& dir) {
  if (!dir->is_dir()) return InvalidArgument("not a directory");
  std::vector<VfsFile> out;
  ExportInto(dir, "", &out);
  return out;
}

}  // namespace airlock::wasm
