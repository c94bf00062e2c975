// Loading a runtime's packed stdlib (a tar archive) into the VFS: ustar,
// GNU long names, pax paths; malformed archives are errors, never crashes.
// And from an index of the archive (tar_index.h): the same tree, and a
// damaged index is refused before anything is created.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "wasm/tar_index.h"
#include "wasm/tar_reader.h"

namespace airlock::wasm {
namespace {

// One 512-byte ustar header (plus data, padded) with a valid checksum.
std::string Entry(std::string_view name, char type, std::string_view data = "",
                  std::string_view prefix = "") {
  std::string h(512, '\0');
  h.replace(0, std::min<size_t>(name.size(), 100), name.substr(0, 100));
  h.replace(100, 7, "0000644");
  char size[13];
  std::snprintf(size, sizeof(size), "%011llo", static_cast<unsigned long long>(data.size()));
  h.replace(124, 11, size);
  h.replace(136, 11, "00000000000");
  h[156] = type;
  h.replace(257, 6, std::string("ustar\0", 6));
  h.replace(263, 2, "00");
  h.replace(345, prefix.size(), prefix);
  h.replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  char chk[8];
  std::snprintf(chk, sizeof(chk), "%06o", sum);
  h.replace(148, 7, std::string(chk, 6) + '\0');
  std::string out = h + std::string(data);
  out.append((512 - data.size() % 512) % 512, '\0');
  return out;
}

std::string End() { return std::string(1024, '\0'); }

class TarTest : public ::testing::Test {
 protected:
  TarTest() : vfs_({.max_bytes = 1 << 20, .max_nodes = 100}) {
    dest_ = *vfs_.MakeDirs("usr/lib");
  }
  StatusOr<TarStats> Load(const std::string& archive) { return LoadTar(archive, vfs_, dest_); }
  Vfs vfs_;
  NodePtr dest_;
};

TEST_F(TarTest, LoadsFilesAndDirectoriesReadOnly) {
  std::string tar = Entry("./pkg/", '5') + Entry("./pkg/a.py", '0', "print('a')\n") +
                    Entry("pkg/sub/b.py", '0', std::string(700, 'b')) + Entry("empty", '0') +
                    Entry("link", '2') + End();
  auto stats = Load(tar);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->files, 3u);
  EXPECT_EQ(stats->dirs, 1u);
  EXPECT_EQ(stats->skipped, 1u);
  EXPECT_EQ(stats->bytes, 11u + 700);
  NodePtr n;
  ASSERT_EQ(vfs_.Lookup(dest_, "pkg/a.py", &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), "print('a')\n");
  ASSERT_EQ(vfs_.Lookup(dest_, "pkg/sub/b.py", &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), std::string(700, 'b'));
  EXPECT_TRUE(n->read_only());
  EXPECT_TRUE(dest_->read_only());
  EXPECT_EQ(vfs_.Lookup(dest_, "link", &n), Errno::kNoent);
  NodePtr f;
  EXPECT_EQ(vfs_.CreateFile(dest_, "new", &f), Errno::kRofs);
}

TEST_F(TarTest, HonoursPrefixGnuLongNamesAndPaxPaths) {
  std::string long_name = std::string(120, 'L') + "/file.txt";
  std::string pax_name = "pax/" + std::string(150, 'p');
  std::string pax_record = "path=" + pax_name + "\n";
  // A pax record is "<len> key=value\n" where len counts itself.
  std::string rec = std::to_string(pax_record.size() + 4) + " " + pax_record;
  ASSERT_EQ(rec.size(), pax_record.size() + 4);
  std::string tar = Entry("f.txt", '0', "P", "pre/fix") +
                    Entry("././@LongLink", 'L', long_name + std::string(1, '\0')) +
                    Entry("truncated-name", '0', "G") + Entry("PaxHeader", 'x', rec) +
                    Entry("short", '0', "X") + End();
  auto stats = Load(tar);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  NodePtr n;
  ASSERT_EQ(vfs_.Lookup(dest_, "pre/fix/f.txt", &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), "P");
  ASSERT_EQ(vfs_.Lookup(dest_, long_name, &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), "G");
  ASSERT_EQ(vfs_.Lookup(dest_, pax_name, &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), "X");
  EXPECT_EQ(vfs_.Lookup(dest_, "short", &n), Errno::kNoent);
}

TEST_F(TarTest, MalformedArchivesAreErrors) {
  std::string good = Entry("a", '0', "hello") + End();
  ASSERT_TRUE(LoadTar(good, vfs_, *vfs_.MakeDirs("ok")).ok());

  std::string bad_sum = good;
  bad_sum[0] = 'b';
  EXPECT_EQ(Load(bad_sum).status().code(), StatusCode::kInvalidArgument);

  std::string truncated_data = Entry("a", '0', std::string(2000, 'x')).substr(0, 1024);
  EXPECT_EQ(Load(truncated_data).status().code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(Load(good.substr(0, 100)).status().code(), StatusCode::kInvalidArgument);

  std::string bad_size = Entry("a", '0', "hello");
  bad_size.replace(124, 11, "0000000009x");
  EXPECT_FALSE(Load(bad_size).ok());  // checksum or size: either way refused

  EXPECT_EQ(Load(Entry("../evil", '0', "x") + End()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Load(Entry("a/../../evil", '0', "x") + End()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Load(Entry("PaxHeader", 'x', "99 path=x\n") + End()).status().code(),
            StatusCode::kInvalidArgument);
  NodePtr n;
  EXPECT_EQ(vfs_.Lookup(vfs_.root(), "usr/evil", &n), Errno::kNoent);
  EXPECT_EQ(vfs_.Lookup(vfs_.root(), "evil", &n), Errno::kNoent);
}

TEST_F(TarTest, AbsoluteNamesStayUnderTheDestination) {
  auto stats = Load(Entry("/etc/passwd", '0', "root") + End());
  ASSERT_TRUE(stats.ok());
  NodePtr n;
  EXPECT_EQ(vfs_.Lookup(dest_, "etc/passwd", &n), Errno::kSuccess);
  EXPECT_EQ(vfs_.Lookup(vfs_.root(), "etc", &n), Errno::kNoent);
}

TEST_F(TarTest, VfsLimitsApply) {
  Vfs small({.max_bytes = 100, .max_nodes = 100});
  auto st = LoadTar(Entry("big", '0', std::string(101, 'x')) + End(), small, small.root());
  EXPECT_EQ(st.status().code(), StatusCode::kResourceExhausted);
}

TEST_F(TarTest, RandomCorruptionNeverCrashes) {
  std::string good = Entry("d/", '5') + Entry("d/a", '0', std::string(600, 'a')) +
                     Entry("././@LongLink", 'L', std::string(300, 'n')) + Entry("x", '0', "b") + End();
  std::mt19937 rng(1234);
  int loaded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string t = good;
    int flips = 1 + rng() % 4;
    for (int j = 0; j < flips; ++j) t[rng() % t.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) t.resize(rng() % t.size());
    Vfs v({.max_bytes = 1 << 16, .max_nodes = 50});
    if (LoadTar(t, v, v.root()).ok()) ++loaded;
  }
  EXPECT_GT(loaded, 0);  // corruption of data bytes is undetectable and fine
}

TEST_F(TarTest, ReadsArchivesMadeBySystemTar) {
  if (std::system("tar --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no tar";
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("airlock-tar-" + std::to_string(getpid()));
  fs::create_directories(dir / "src/lib" / std::string(110, 'q'));
  std::ofstream(dir / "src/lib/mod.py") << "x = 1\n";
  std::ofstream(dir / "src/lib" / std::string(110, 'q') / "deep.py") << "y = 2\n";
  std::string cmd = "tar -C " + (dir / "src").string() + " -cf " + (dir / "a.tar").string() + " lib";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(dir / "a.tar", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove_all(dir);
  auto stats = Load(ss.str());
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->files, 2u);
  NodePtr n;
  ASSERT_EQ(vfs_.Lookup(dest_, "lib/mod.py", &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), "x = 1\n");
  ASSERT_EQ(vfs_.Lookup(dest_, "lib/" + std::string(110, 'q') + "/deep.py", &n), Errno::kSuccess);
  EXPECT_EQ(n->data(), "y = 2\n");
}


// ---------------------------------------------------------------- the index

// Every node under `dir`, "path:kind:bytes" sorted, to compare two trees.
void List(Vfs& vfs, const NodePtr& dir, const std::string& prefix, std::vector<std::string>* out) {
  for (const auto& [name, child] : dir->children()) {
    const std::string path = prefix + "/" + name;
    if (child->is_dir()) {
      out->push_back(path + ":d:" + (child->read_only() ? "ro" : "rw"));
      List(vfs, child, path, out);
    } else {
      out->push_back(path + ":f:" + std::string(child->data()) + (child->read_only() ? ":ro" : ":rw"));
    }
  }
}

std::string U64(uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

// An index of the given entries, written by hand (the format tar_index.cc
// reads: a count, then kind, offset, size, path length and path each).
std::string IndexOf(const std::vector<TarEntry>& entries) {
  std::string out = U64(entries.size());
  for (const TarEntry& e : entries) {
    out += static_cast<char>(e.kind);
    out += U64(e.offset) + U64(e.size) + U64(e.path.size()) + e.path;
  }
  return out;
}

class TarIndexTest : public TarTest {
 protected:
  std::string tar_ = Entry("./pkg/", '5') + Entry("./pkg/a.py", '0', "print('a')\n") +
                     Entry("pkg/sub/b.py", '0', std::string(700, 'b')) + Entry("empty", '0') + Entry("link", '2') +
                     Entry("././@LongLink", 'L', std::string(120, 'L') + "/file.txt" + std::string(1, '\0')) +
                     Entry("truncated-name", '0', "G") + End();
};

TEST_F(TarIndexTest, TheIndexLoadsTheTreeTheWalkLoads) {
  ASSERT_TRUE(Load(tar_).ok());
  auto index = EncodeTarIndex(tar_);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto entries = DecodeTarIndex(tar_, *index);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  Vfs other({.max_bytes = 1 << 20, .max_nodes = 100});
  NodePtr dest = *other.MakeDirs("usr/lib");
  auto stats = LoadTarEntries(tar_, *entries, other, dest);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->files, 4u);
  EXPECT_EQ(stats->dirs, 1u);
  EXPECT_EQ(stats->skipped, 1u);
  std::vector<std::string> walked, indexed;
  List(vfs_, dest_, "", &walked);
  List(other, dest, "", &indexed);
  EXPECT_EQ(indexed, walked);
  EXPECT_GE(walked.size(), 6u);
  // A broken archive has no index.
  std::string bad = tar_;
  bad[600] ^= 1;
  EXPECT_FALSE(EncodeTarIndex(bad.substr(0, 700)).ok());
}

TEST_F(TarIndexTest, AnIndexThatDoesNotFitTheArchiveIsRefused) {
  auto good = DecodeTarIndex(tar_, *EncodeTarIndex(tar_));
  ASSERT_TRUE(good.ok());
  std::vector<TarEntry> entries = *good;
  auto refused = [&](std::vector<TarEntry> e, const std::string& why) {
    auto r = DecodeTarIndex(tar_, IndexOf(e));
    EXPECT_FALSE(r.ok()) << why;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << why;
    }
  };
  std::vector<TarEntry> e = entries;
  e[1].offset = tar_.size();
  e[1].size = 1;
  refused(e, "bytes past the end");
  e = entries;
  e[1].size = ~uint64_t{0};
  refused(e, "a size that wraps");
  e = entries;
  e[1].path = "../escape.py";
  refused(e, "a path out of the destination");
  e = entries;
  e[1].path = "pkg//a.py";
  refused(e, "a path the walk never gives");
  e = entries;
  e[1].path = std::string("pkg/a\0.py", 9);
  refused(e, "a NUL in a path");
  e = entries;
  e[1].kind = static_cast<TarEntry::Kind>('x');
  refused(e, "an unknown kind");
  e = entries;
  e[1].path = "";
  refused(e, "a file without a name");
  const std::string index = IndexOf(entries);
  EXPECT_FALSE(DecodeTarIndex(tar_, index + "x").ok()) << "bytes after the last entry";
  EXPECT_FALSE(DecodeTarIndex(tar_, index.substr(0, index.size() - 3)).ok()) << "truncated";
  EXPECT_FALSE(DecodeTarIndex(tar_, U64(1u << 30)).ok()) << "a count larger than the index";
  EXPECT_FALSE(DecodeTarIndex(tar_, "").ok());
  // What is refused created nothing: the caller walks the archive instead.
  EXPECT_TRUE(dest_->children().empty());
}

TEST_F(TarIndexTest, RandomCorruptionOfAnIndexNeverCrashesOrReachesPastTheArchive) {
  const std::string index = *EncodeTarIndex(tar_);
  std::mt19937 rng(7);
  int decoded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bad = index;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bad[rng() % bad.size()] = static_cast<char>(rng());
    if (rng() % 8 == 0) bad.resize(rng() % bad.size());
    auto entries = DecodeTarIndex(tar_, bad);
    if (!entries.ok()) continue;
    ++decoded;
    for (const TarEntry& e : *entries) {
      ASSERT_LE(e.offset, tar_.size());
      ASSERT_LE(e.size, tar_.size() - e.offset);
      ASSERT_NE("/" + e.path + "/", std::string("/../")) << e.path;
      ASSERT_EQ(("/" + e.path + "/").find("/../"), std::string::npos) << e.path;
    }
    Vfs v({.max_bytes = 1 << 20, .max_nodes = 100});
    (void)LoadTarEntries(tar_, *entries, v, v.root());
  }
  EXPECT_GT(decoded, 0);  // flips in offsets and sizes within bounds are undetectable and fine
}

}  // namespace
}  // namespace airlock::wasm
