// The WASI tier's in-memory filesystem: path resolution that never leaves
// its start directory, read-only subtrees, byte/node limits, POSIX-like
// unlink/rename, import/export helpers.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "wasm/vfs.h"

namespace airlock::wasm {
namespace {

class VfsTest : public ::testing::Test {
 protected:
  VfsTest() : vfs_({.max_bytes = 1000, .max_nodes = 20}, [this] { return now_; }) {}
  NodePtr Dir(std::string_view path) {
    StatusOr<NodePtr> d = vfs_.MakeDirs(path);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : nullptr;
  }
  uint64_t now_ = 1000;
  Vfs vfs_;
};

TEST_F(VfsTest, AddFileCreatesParentsAndExportListsFilesInOrder) {
  NodePtr work = Dir("work");
  ASSERT_TRUE(vfs_.AddFile(work, "b/z.txt", "zz").ok());
  ASSERT_TRUE(vfs_.AddFile(work, "a.txt", "a").ok());
  ASSERT_TRUE(vfs_.AddFile(work, "b/c/d.txt", "ddd").ok());
  ASSERT_TRUE(vfs_.AddFile(work, "a.txt", "replaced").ok());
  auto files = Vfs::ExportFiles(work);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].path, "a.txt");
  EXPECT_EQ((*files)[0].data, "replaced");
  EXPECT_EQ((*files)[1].path, "b/c/d.txt");
  EXPECT_EQ((*files)[2].path, "b/z.txt");
  EXPECT_EQ(vfs_.bytes_used(), 8u + 3 + 2);
  EXPECT_FALSE(vfs_.AddFile(work, "b", "x").ok());        // a directory
  EXPECT_FALSE(vfs_.AddFile(work, "../x", "x").ok());     // escapes
  EXPECT_FALSE(vfs_.AddFile(work, "a.txt/x", "x").ok());  // parent is a file
}

TEST_F(VfsTest, ABorrowedFileSharesItsBufferUntilItIsWritten) {
  NodePtr work = Dir("work");
  auto buffer = std::make_shared<std::string>("shared bytes");
  const std::string_view bytes(*buffer);
  std::weak_ptr<std::string> alive = buffer;
  ASSERT_TRUE(vfs_.AddFile(work, "lib/f", bytes, buffer).ok());
  buffer.reset();  // the file keeps its backing alive
  NodePtr f;
  ASSERT_EQ(vfs_.Lookup(work, "lib/f", &f), Errno::kSuccess);
  EXPECT_EQ(f->data().data(), bytes.data()) << "not copied";
  EXPECT_EQ(f->size(), 12u);
  EXPECT_EQ(vfs_.bytes_used(), 12u) << "charged as if copied";
  uint8_t out[6];
  size_t n = 0;
  ASSERT_EQ(vfs_.Read(f, 7, out, &n), Errno::kSuccess);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), n), "bytes");
  EXPECT_FALSE(alive.expired());

  // A write gives the file its own copy; the shared buffer is untouched.
  ASSERT_EQ(vfs_.Write(f, 0, "SHARED"), Errno::kSuccess);
  EXPECT_EQ(f->data(), "SHARED bytes");
  EXPECT_NE(f->data().data(), bytes.data());
  EXPECT_TRUE(alive.expired()) << "the backing is let go";
  EXPECT_EQ(vfs_.bytes_used(), 12u);
  ASSERT_EQ(vfs_.Truncate(f, 3), Errno::kSuccess);
  EXPECT_EQ(f->data(), "SHA");
  EXPECT_EQ(vfs_.bytes_used(), 3u);

  // The byte limit holds for borrowed files too; a refused one is not left.
  auto big = std::make_shared<std::string>(2000, 'x');
  EXPECT_FALSE(vfs_.AddFile(work, "big", *big, big).ok());
  EXPECT_EQ(vfs_.Lookup(work, "big", &f), Errno::kNoent);
  EXPECT_EQ(vfs_.bytes_used(), 3u);
}

TEST_F(VfsTest, LookupNeverLeavesTheStartDirectory) {
  NodePtr work = Dir("work");
  ASSERT_TRUE(vfs_.AddFile(work, "sub/f", "x").ok());
  ASSERT_TRUE(vfs_.AddFile(vfs_.root(), "secret", "s").ok());
  NodePtr n;
  EXPECT_EQ(vfs_.Lookup(work, "sub/../sub/./f", &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), "x");
  EXPECT_EQ(vfs_.Lookup(work, "..", &n), Errno::kNotcapable);
  EXPECT_EQ(vfs_.Lookup(work, "../secret", &n), Errno::kNotcapable);
  EXPECT_EQ(vfs_.Lookup(work, "sub/../../secret", &n), Errno::kNotcapable);
  EXPECT_EQ(vfs_.Lookup(work, "/secret", &n), Errno::kNotcapable);
  EXPECT_EQ(vfs_.Lookup(work, std::string_view("sub\0/f", 6), &n), Errno::kInval);
  EXPECT_EQ(vfs_.Lookup(work, "", &n), Errno::kNoent);
  EXPECT_EQ(vfs_.Lookup(work, "sub/f/", &n), Errno::kNotdir);
  EXPECT_EQ(vfs_.Lookup(work, "sub/f/x", &n), Errno::kNotdir);
  EXPECT_EQ(vfs_.Lookup(work, "nope", &n), Errno::kNoent);
  EXPECT_EQ(vfs_.Lookup(work, std::string(256, 'a'), &n), Errno::kNametoolong);
  EXPECT_EQ(vfs_.Lookup(work, std::string(5000, 'a'), &n), Errno::kNametoolong);
  EXPECT_EQ(vfs_.Lookup(work, ".", &n), Errno::kSuccess);
  EXPECT_EQ(n, work);
}

TEST_F(VfsTest, ByteLimitGivesEnospcAndNodeLimitEdquot) {
  NodePtr work = Dir("work");
  NodePtr f;
  ASSERT_EQ(vfs_.CreateFile(work, "f", &f), Errno::kSuccess);
  EXPECT_EQ(vfs_.Write(f, 0, std::string(900, 'x')), Errno::kSuccess);
  EXPECT_EQ(vfs_.Write(f, 900, std::string(101, 'x')), Errno::kNospc);
  EXPECT_EQ(vfs_.Write(f, 900, std::string(100, 'x')), Errno::kSuccess);
  EXPECT_EQ(vfs_.Truncate(f, 1001), Errno::kNospc);
  EXPECT_EQ(vfs_.Write(f, ~0ull - 1, "ab"), Errno::kFbig);
  EXPECT_EQ(vfs_.Write(f, 1ull << 40, "a"), Errno::kNospc);
  EXPECT_EQ(vfs_.bytes_used(), 1000u);
  EXPECT_EQ(vfs_.Truncate(f, 10), Errno::kSuccess);
  EXPECT_EQ(vfs_.bytes_used(), 10u);
  EXPECT_FALSE(vfs_.AddFile(work, "big", std::string(991, 'x')).ok());

  uint64_t before = vfs_.nodes_used();  // root, work, f
  EXPECT_EQ(before, 3u);
  for (uint64_t i = before; i < 20; ++i) {
    ASSERT_EQ(vfs_.CreateDir(work, "d" + std::to_string(i)), Errno::kSuccess);
  }
  EXPECT_EQ(vfs_.CreateDir(work, "one-more"), Errno::kDquot);
  NodePtr g;
  EXPECT_EQ(vfs_.CreateFile(work, "one-more", &g), Errno::kDquot);
  EXPECT_EQ(vfs_.RemoveDir(work, "d5"), Errno::kSuccess);
  EXPECT_EQ(vfs_.CreateDir(work, "one-more"), Errno::kSuccess);
}

TEST_F(VfsTest, UnlinkedFileStaysUsableAndChargedWhileReferenced) {
  NodePtr work = Dir("work");
  NodePtr f;
  ASSERT_EQ(vfs_.CreateFile(work, "f", &f), Errno::kSuccess);
  ASSERT_EQ(vfs_.Write(f, 0, "hello"), Errno::kSuccess);
  EXPECT_EQ(vfs_.UnlinkFile(work, "f"), Errno::kSuccess);
  EXPECT_TRUE(f->unlinked());
  EXPECT_EQ(vfs_.Write(f, 5, "!"), Errno::kSuccess);
  uint8_t buf[16];
  size_t n = 0;
  ASSERT_EQ(vfs_.Read(f, 0, buf, &n), Errno::kSuccess);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), n), "hello!");
  EXPECT_EQ(vfs_.bytes_used(), 6u);
  f.reset();
  EXPECT_EQ(vfs_.bytes_used(), 0u);
  EXPECT_EQ(vfs_.nodes_used(), 2u);
  EXPECT_EQ(vfs_.UnlinkFile(work, "f"), Errno::kNoent);
}

TEST_F(VfsTest, ReadOnlySubtreeRefusesEveryMutation) {
  NodePtr lib = Dir("lib");
  ASSERT_TRUE(vfs_.AddFile(lib, "pkg/mod.py", "print(1)").ok());
  NodePtr work = Dir("work");
  Vfs::SetReadOnly(lib);
  NodePtr pkg = lib->Child("pkg");
  NodePtr mod = pkg->Child("mod.py");
  ASSERT_TRUE(mod);
  EXPECT_TRUE(mod->read_only());
  NodePtr f;
  EXPECT_EQ(vfs_.CreateFile(pkg, "new.py", &f), Errno::kRofs);
  EXPECT_EQ(vfs_.CreateDir(pkg, "new"), Errno::kRofs);
  EXPECT_EQ(vfs_.Write(mod, 0, "x"), Errno::kRofs);
  EXPECT_EQ(vfs_.Truncate(mod, 0), Errno::kRofs);
  EXPECT_EQ(vfs_.UnlinkFile(pkg, "mod.py"), Errno::kRofs);
  EXPECT_EQ(vfs_.RemoveDir(lib, "pkg"), Errno::kNotempty);
  EXPECT_EQ(vfs_.Rename(pkg, "mod.py", work, "mod.py"), Errno::kRofs);
  EXPECT_EQ(vfs_.SetTimes(mod, 1, 1), Errno::kRofs);
  EXPECT_EQ(vfs_.AddFile(lib, "pkg/mod.py", "x").code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(vfs_.MakeDirs(lib, "pkg/sub").ok());
  EXPECT_EQ(mod->data(), "print(1)");
}

TEST_F(VfsTest, RenameFollowsPosixRules) {
  NodePtr w = Dir("w");
  ASSERT_TRUE(vfs_.AddFile(w, "a", "A").ok());
  ASSERT_TRUE(vfs_.AddFile(w, "b", "B").ok());
  ASSERT_TRUE(vfs_.AddFile(w, "full/x", "X").ok());
  ASSERT_TRUE(vfs_.MakeDirs(w, "empty").ok());
  ASSERT_TRUE(vfs_.MakeDirs(w, "d/inner").ok());
  EXPECT_EQ(vfs_.Rename(w, "a", w, "b"), Errno::kSuccess);  // replaces the file
  EXPECT_EQ(w->Child("b")->data(), "A");
  EXPECT_FALSE(w->Child("a"));
  EXPECT_EQ(vfs_.Rename(w, "b", w, "empty"), Errno::kIsdir);
  EXPECT_EQ(vfs_.Rename(w, "d", w, "b"), Errno::kNotdir);
  EXPECT_EQ(vfs_.Rename(w, "d", w, "full"), Errno::kNotempty);
  EXPECT_EQ(vfs_.Rename(w, "d", w->Child("d")->Child("inner"), "d2"), Errno::kInval);
  EXPECT_EQ(vfs_.Rename(w, "d", w, "empty"), Errno::kSuccess);  // replaces an empty dir
  EXPECT_TRUE(w->Child("empty")->Child("inner"));
  EXPECT_EQ(vfs_.Rename(w, "missing", w, "x"), Errno::kNoent);
  EXPECT_EQ(vfs_.Rename(w, "b", w, ".."), Errno::kInval);
}

TEST_F(VfsTest, TimestampsComeFromTheClock) {
  NodePtr w = Dir("w");
  now_ = 5000;
  NodePtr f;
  ASSERT_EQ(vfs_.CreateFile(w, "f", &f), Errno::kSuccess);
  EXPECT_EQ(f->mtim, 5000u);
  EXPECT_EQ(w->mtim, 5000u);
  now_ = 7000;
  ASSERT_EQ(vfs_.Write(f, 0, "x"), Errno::kSuccess);
  EXPECT_EQ(f->mtim, 7000u);
  EXPECT_EQ(f->atim, 5000u);
  ASSERT_EQ(vfs_.SetTimes(f, 42, Vfs::kKeep), Errno::kSuccess);
  EXPECT_EQ(f->atim, 42u);
  EXPECT_EQ(f->mtim, 7000u);
  now_ = 9000;
  ASSERT_EQ(vfs_.SetTimes(f, Vfs::kKeep, Vfs::kNow), Errno::kSuccess);
  EXPECT_EQ(f->mtim, 9000u);
}

TEST_F(VfsTest, ResolveParentSplitsLeafAndRejectsBadNames) {
  NodePtr w = Dir("w");
  ASSERT_TRUE(vfs_.MakeDirs(w, "a/b").ok());
  NodePtr parent;
  std::string leaf;
  bool slash = false;
  ASSERT_EQ(vfs_.ResolveParent(w, "a/b/new/", &parent, &leaf, &slash), Errno::kSuccess);
  EXPECT_EQ(parent, w->Child("a")->Child("b"));
  EXPECT_EQ(leaf, "new");
  EXPECT_TRUE(slash);
  EXPECT_EQ(vfs_.ResolveParent(w, "../x", &parent, &leaf, &slash), Errno::kNotcapable);
  EXPECT_EQ(vfs_.ResolveParent(w, "nope/x", &parent, &leaf, &slash), Errno::kNoent);
  NodePtr f;
  EXPECT_EQ(vfs_.CreateFile(w, std::string(256, 'n'), &f), Errno::kNametoolong);
  EXPECT_EQ(vfs_.CreateFile(w, "a/b", &f), Errno::kInval);
  EXPECT_EQ(vfs_.CreateFile(w, "..", &f), Errno::kInval);
  EXPECT_EQ(vfs_.CreateFile(w, "a", &f), Errno::kExist);
}

}  // namespace
}  // namespace airlock::wasm
