#include "runtimes/build_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <thread>

namespace airlock::runtimes {
namespace {

namespace fs = std::filesystem;

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = ::testing::TempDir() + "/airlock_build_cache_XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << data;
}

// Sets both timestamps of `p` to `seconds` since the epoch.
void SetMtime(const fs::path& p, time_t seconds) {
  struct timespec ts[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
}

std::string KeyFor(const std::string& s) {
  BuildKeyInput in;
  in.language = "c";
  in.files = {{"main.c", s}};
  return BuildKey(in);
}

// Payloads with embedded NULs and high bytes, distinct per seed.
std::string Artifact(int seed, size_t size) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>((seed * 131 + i * 7) & 0xFF);
  return s;
}

// Files in `dir` other than . and .., by name.
std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

BuildKeyInput BaseInput() {
  return BuildKeyInput{
      .language = "c",
      .isolation = "native",
      .compile_argv = {"gcc", "-O2", "-o", "main", "main.c"},
      .compiler_version = "gcc (Debian 12.2.0-14) 12.2.0",
      .files = {{"main.c", "#include \"x.h\"\nint main(){return X;}\n"}, {"x.h", "#define X 0\n"}},
  };
}

StatusOr<std::unique_ptr<BuildCache>> OpenAt(const std::string& dir, uint64_t max_bytes = 1 << 20,
                                             uint64_t max_entry_bytes = 1 << 20) {
  return BuildCache::Open({.dir = dir, .max_bytes = max_bytes, .max_entry_bytes = max_entry_bytes});
}

// ---------------------------------------------------------------------------
// BuildKey

TEST(BuildKeyTest, DeterministicHex) {
  std::string k = BuildKey(BaseInput());
  EXPECT_EQ(k, BuildKey(BaseInput()));
  EXPECT_TRUE(IsValidBuildKey(k)) << k;
}

TEST(BuildKeyTest, EveryInputChangesTheKey) {
  const std::string base = BuildKey(BaseInput());
  std::set<std::string> keys = {base};
  auto expect_new = [&](const BuildKeyInput& in, const char* what) {
    std::string k = BuildKey(in);
    EXPECT_NE(k, base) << what;
    EXPECT_TRUE(keys.insert(k).second) << what << " collides with another variant";
  };
  BuildKeyInput in = BaseInput();
  in.files[0].second += " ";
  expect_new(in, "source");
  in = BaseInput();
  in.files[1].second = "#define X 1\n";
  expect_new(in, "included input file");
  in = BaseInput();
  in.files.push_back({"y.h", ""});
  expect_new(in, "extra (empty) input file");
  in = BaseInput();
  in.files[1].first = "y.h";
  expect_new(in, "input file name");
  in = BaseInput();
  in.compile_argv[1] = "-O0";
  expect_new(in, "flags");
  in = BaseInput();
  std::swap(in.compile_argv[1], in.compile_argv[2]);
  expect_new(in, "argv order");
  in = BaseInput();
  in.compiler_version = "gcc (Debian 12.2.0-15) 12.2.0";
  expect_new(in, "compiler version");
  in = BaseInput();
  in.isolation = "wasm";
  expect_new(in, "tier");
  in = BaseInput();
  in.language = "cpp";
  expect_new(in, "language");
}

TEST(BuildKeyTest, FileOrderDoesNotMatter) {
  BuildKeyInput a = BaseInput();
  BuildKeyInput b = BaseInput();
  std::swap(b.files[0], b.files[1]);
  EXPECT_EQ(BuildKey(a), BuildKey(b));
}

TEST(BuildKeyTest, EncodingIsUnambiguous) {
  BuildKeyInput a = BaseInput();
  BuildKeyInput b = BaseInput();
  a.compile_argv = {"-Dab", "c"};
  b.compile_argv = {"-Da", "bc"};
  EXPECT_NE(BuildKey(a), BuildKey(b)) << "argv boundaries";
  a = BaseInput();
  b = BaseInput();
  a.files = {{"main.c", "x.hint"}};
  b.files = {{"main.cx.h", "int"}};
  EXPECT_NE(BuildKey(a), BuildKey(b)) << "name/content boundary";
  a = BaseInput();
  b = BaseInput();
  a.language = "cnative";
  a.isolation = "";
  b.language = "c";
  b.isolation = "native";
  EXPECT_NE(BuildKey(a), BuildKey(b)) << "field boundary";
  a = BaseInput();
  b = BaseInput();
  b.compile_argv.push_back("");
  EXPECT_NE(BuildKey(a), BuildKey(b)) << "empty trailing argument";
}

TEST(BuildKeyTest, ValidKeys) {
  EXPECT_TRUE(IsValidBuildKey(std::string(64, 'a')));
  EXPECT_TRUE(IsValidBuildKey("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsValidBuildKey(""));
  EXPECT_FALSE(IsValidBuildKey(std::string(63, 'a')));
  EXPECT_FALSE(IsValidBuildKey(std::string(65, 'a')));
  EXPECT_FALSE(IsValidBuildKey(std::string(64, 'A')));
  EXPECT_FALSE(IsValidBuildKey(std::string(64, 'g')));
  EXPECT_FALSE(IsValidBuildKey("../" + std::string(61, 'a')));
  EXPECT_FALSE(IsValidBuildKey(std::string(63, 'a') + '\0'));
}

// ---------------------------------------------------------------------------
// BuildCache

TEST(BuildCacheTest, OpenCreatesPrivateDirectory) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty());
  std::string dir = scratch.path() + "/a/b/cache";
  auto cache = OpenAt(dir);
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  struct stat st;
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ((*cache)->entries(), 0u);
  EXPECT_EQ((*cache)->total_bytes(), 0u);
}

TEST(BuildCacheTest, OpenTightensLoosePermissions) {
  ScratchDir scratch;
  std::string dir = scratch.path() + "/cache";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  auto cache = OpenAt(dir);
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST(BuildCacheTest, OpenRefusesSymlinkAndFile) {
  ScratchDir scratch;
  std::string real = scratch.path() + "/real";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  std::string link = scratch.path() + "/link";
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  EXPECT_FALSE(OpenAt(link).ok());
  std::string file = scratch.path() + "/file";
  WriteFile(file, "x");
  EXPECT_FALSE(OpenAt(file).ok());
  EXPECT_FALSE(OpenAt("").ok());
}

TEST(BuildCacheTest, HitAndMiss) {
  ScratchDir scratch;
  auto opened = OpenAt(scratch.path() + "/c");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  BuildCache& cache = **opened;
  const std::string key = BuildKey(BaseInput());
  const std::string bin = Artifact(1, 5000);

  EXPECT_FALSE(cache.Get(key).has_value());
  ASSERT_TRUE(cache.Put(key, bin).ok());
  std::optional<std::string> got = cache.Get(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, bin);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_GT(cache.total_bytes(), bin.size());
  EXPECT_EQ(cache.total_bytes(), fs::file_size(scratch.path() + "/c/" + key));

  // A different key misses.
  EXPECT_FALSE(cache.Get(KeyFor("other")).has_value());

  // Replacing an entry keeps one entry with the new size.
  const std::string bin2 = Artifact(2, 100);
  ASSERT_TRUE(cache.Put(key, bin2).ok());
  EXPECT_EQ(cache.Get(key), bin2);
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.total_bytes(), fs::file_size(scratch.path() + "/c/" + key));

  // An empty artifact round-trips as a hit, not a miss.
  const std::string empty_key = KeyFor("empty");
  ASSERT_TRUE(cache.Put(empty_key, "").ok());
  EXPECT_EQ(cache.Get(empty_key), std::string());

  BuildCache::Stats s = cache.stats();
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.puts, 3u);
  EXPECT_EQ(Listing(scratch.path() + "/c"), (std::set<std::string>{key, empty_key}));  // no temp files
}

TEST(BuildCacheTest, LruEvictionKeepsMostRecentlyUsed) {
  ScratchDir scratch;
  const size_t payload = 1000;
  // Learn the on-disk size of one entry (header + payload).
  uint64_t entry_bytes;
  {
    auto probe = OpenAt(scratch.path() + "/probe");
    ASSERT_TRUE(probe.ok());
    ASSERT_TRUE((*probe)->Put(KeyFor("probe"), Artifact(0, payload)).ok());
    entry_bytes = (*probe)->total_bytes();
  }
  const std::string dir = scratch.path() + "/c";
  auto opened = OpenAt(dir, 3 * entry_bytes);
  ASSERT_TRUE(opened.ok());
  BuildCache& cache = **opened;
  const std::string a = KeyFor("a"), b = KeyFor("b"), c = KeyFor("c"), d = KeyFor("d"), e = KeyFor("e");
  ASSERT_TRUE(cache.Put(a, Artifact(1, payload)).ok());
  ASSERT_TRUE(cache.Put(b, Artifact(2, payload)).ok());
  ASSERT_TRUE(cache.Put(c, Artifact(3, payload)).ok());
  EXPECT_EQ(cache.entries(), 3u);
  EXPECT_EQ(cache.stats().evictions, 0u);

  ASSERT_TRUE(cache.Get(a).has_value());  // a is now the most recent; b the oldest
  ASSERT_TRUE(cache.Put(d, Artifact(4, payload)).ok());
  EXPECT_EQ(cache.entries(), 3u);
  EXPECT_LE(cache.total_bytes(), 3 * entry_bytes);
  EXPECT_FALSE(cache.Get(b).has_value());
  EXPECT_EQ(cache.Get(a), Artifact(1, payload));
  EXPECT_EQ(cache.Get(c), Artifact(3, payload));
  EXPECT_EQ(cache.Get(d), Artifact(4, payload));
  EXPECT_EQ(Listing(dir), (std::set<std::string>{a, c, d}));

  // Order now (oldest first): a, c, d. A larger entry needs two slots.
  ASSERT_TRUE(cache.Put(e, Artifact(5, 2 * payload)).ok());
  EXPECT_EQ(Listing(dir), (std::set<std::string>{d, e}));
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.total_bytes(), fs::file_size(dir + "/" + d) + fs::file_size(dir + "/" + e));
  EXPECT_EQ(cache.stats().evictions, 3u);
}

TEST(BuildCacheTest, OversizeEntryRefused) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  auto opened = OpenAt(dir, /*max_bytes=*/4096, /*max_entry_bytes=*/1000);
  ASSERT_TRUE(opened.ok());
  BuildCache& cache = **opened;
  const std::string small = KeyFor("small");
  ASSERT_TRUE(cache.Put(small, Artifact(1, 1000)).ok());

  Status st = cache.Put(KeyFor("big"), Artifact(2, 1001));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_FALSE(cache.Get(KeyFor("big")).has_value());

  // Within max_entry_bytes but larger than the whole cache.
  auto tiny = OpenAt(scratch.path() + "/t", /*max_bytes=*/500, /*max_entry_bytes=*/1000);
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ((*tiny)->Put(small, Artifact(1, 400)).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ((*tiny)->entries(), 0u);

  // The refused Put evicted nothing and left no files behind.
  EXPECT_EQ(cache.Get(small), Artifact(1, 1000));
  EXPECT_EQ(Listing(dir), (std::set<std::string>{small}));
  EXPECT_TRUE(Listing(scratch.path() + "/t").empty());
}

TEST(BuildCacheTest, CorruptedEntryIsAMissAndRemoved) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  auto opened = OpenAt(dir);
  ASSERT_TRUE(opened.ok());
  BuildCache& cache = **opened;
  const std::string bin = Artifact(7, 3000);

  struct Damage {
    const char* name;
    std::function<std::string(const std::string&)> apply;
  };
  const std::vector<Damage> damages = {
      {"flipped payload byte", [](std::string s) { s[s.size() - 10] ^= 1; return s; }},
      {"truncated", [](const std::string& s) { return s.substr(0, s.size() - 1); }},
      {"extended", [](const std::string& s) { return s + "x"; }},
      {"empty", [](const std::string&) { return std::string(); }},
      {"no header", [&](const std::string&) { return bin; }},
      {"flipped header byte", [](std::string s) { s[3] ^= 1; return s; }},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.name);
    const std::string key = KeyFor(d.name);
    ASSERT_TRUE(cache.Put(key, bin).ok());
    const fs::path file = fs::path(dir) / key;
    WriteFile(file, d.apply(ReadFile(file)));
    uint64_t corrupt_before = cache.stats().corrupt;
    EXPECT_FALSE(cache.Get(key).has_value());
    EXPECT_FALSE(fs::exists(file));
    EXPECT_EQ(cache.stats().corrupt, corrupt_before + 1);
    EXPECT_EQ(cache.entries(), 0u);
    EXPECT_EQ(cache.total_bytes(), 0u);
  }

  // A valid file of another key renamed into place is rejected too.
  const std::string k1 = KeyFor("one"), k2 = KeyFor("two");
  ASSERT_TRUE(cache.Put(k1, bin).ok());
  fs::copy_file(fs::path(dir) / k1, fs::path(dir) / k2);
  EXPECT_FALSE(cache.Get(k2).has_value());
  EXPECT_FALSE(fs::exists(fs::path(dir) / k2));
  EXPECT_EQ(cache.Get(k1), bin);

  // A symlink planted under a key name is not followed.
  const std::string k3 = KeyFor("three");
  fs::create_symlink(fs::path(dir) / k1, fs::path(dir) / k3);
  EXPECT_FALSE(cache.Get(k3).has_value());
}

TEST(BuildCacheTest, BadKeysRejectedBeforeTouchingDisk) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  auto opened = OpenAt(dir);
  ASSERT_TRUE(opened.ok());
  BuildCache& cache = **opened;
  const std::vector<std::string> bad = {
      "", "abc", std::string(63, 'a'), std::string(65, 'a'), std::string(64, 'A'),
      "../" + std::string(61, 'a'), "../../escape", std::string(64, '.'), ".tmp-1-2-3",
      std::string(32, 'a') + "/" + std::string(31, 'a'),
  };
  for (const std::string& key : bad) {
    SCOPED_TRACE(key);
    EXPECT_EQ(cache.Put(key, "payload").code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(cache.Get(key).has_value());
  }
  EXPECT_TRUE(Listing(dir).empty());
  EXPECT_EQ(Listing(scratch.path()), (std::set<std::string>{"c"}));
  EXPECT_EQ(cache.entries(), 0u);
}

TEST(BuildCacheTest, ReopenSeesEntriesAndRecomputesTotal) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  const std::string a = KeyFor("a"), b = KeyFor("b"), c = KeyFor("c");
  uint64_t total;
  {
    auto opened = OpenAt(dir);
    ASSERT_TRUE(opened.ok());
    ASSERT_TRUE((*opened)->Put(a, Artifact(1, 1000)).ok());
    ASSERT_TRUE((*opened)->Put(b, Artifact(2, 2000)).ok());
    ASSERT_TRUE((*opened)->Put(c, Artifact(3, 3000)).ok());
    total = (*opened)->total_bytes();
  }
  // Unrelated files are ignored (and left alone).
  WriteFile(fs::path(dir) / "README", "not an entry");
  {
    auto opened = OpenAt(dir);
    ASSERT_TRUE(opened.ok());
    EXPECT_EQ((*opened)->entries(), 3u);
    EXPECT_EQ((*opened)->total_bytes(), total);
    EXPECT_EQ((*opened)->Get(b), Artifact(2, 2000));
  }
  EXPECT_TRUE(fs::exists(fs::path(dir) / "README"));

  // Recency survives via mtime: reopening with a smaller bound evicts the
  // oldest first. Make the order deterministic: b oldest, then c, then a.
  SetMtime(fs::path(dir) / b, 1000);
  SetMtime(fs::path(dir) / c, 2000);
  SetMtime(fs::path(dir) / a, 3000);
  const uint64_t keep = fs::file_size(fs::path(dir) / a) + fs::file_size(fs::path(dir) / c);
  auto opened = OpenAt(dir, keep);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ((*opened)->entries(), 2u);
  EXPECT_EQ((*opened)->total_bytes(), keep);
  EXPECT_FALSE(fs::exists(fs::path(dir) / b));
  EXPECT_EQ((*opened)->Get(a), Artifact(1, 1000));
  EXPECT_EQ((*opened)->Get(c), Artifact(3, 3000));
}

TEST(BuildCacheTest, GetRefreshesMtime) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  auto opened = OpenAt(dir);
  ASSERT_TRUE(opened.ok());
  const std::string key = KeyFor("a");
  ASSERT_TRUE((*opened)->Put(key, "x").ok());
  SetMtime(fs::path(dir) / key, 1000);
  ASSERT_TRUE((*opened)->Get(key).has_value());
  struct stat st;
  ASSERT_EQ(::stat((fs::path(dir) / key).c_str(), &st), 0);
  EXPECT_GT(st.st_mtim.tv_sec, 1000);
}

TEST(BuildCacheTest, StaleTempFilesRemovedOnOpen) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  ASSERT_TRUE(OpenAt(dir).ok());
  WriteFile(fs::path(dir) / ".tmp-1-0-stale", "partial");
  SetMtime(fs::path(dir) / ".tmp-1-0-stale", 1000);
  WriteFile(fs::path(dir) / ".tmp-1-1-fresh", "being written by another process");
  auto opened = OpenAt(dir);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(Listing(dir), (std::set<std::string>{".tmp-1-1-fresh"}));
  EXPECT_EQ((*opened)->entries(), 0u);
}

TEST(BuildCacheTest, DisabledWithZeroMaxBytes) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  auto opened = OpenAt(dir, /*max_bytes=*/0);
  ASSERT_TRUE(opened.ok());
  EXPECT_FALSE((*opened)->enabled());
  const std::string key = KeyFor("a");
  EXPECT_TRUE((*opened)->Put(key, "x").ok());
  EXPECT_FALSE((*opened)->Get(key).has_value());
  EXPECT_FALSE(fs::exists(dir));
}

TEST(BuildCacheTest, TwoInstancesShareADirectory) {
  // Stands in for two processes: separate indexes, one directory.
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  auto one = OpenAt(dir);
  auto two = OpenAt(dir);
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(two.ok());
  const std::string key = KeyFor("shared");
  ASSERT_TRUE((*one)->Put(key, Artifact(1, 777)).ok());
  EXPECT_EQ((*two)->entries(), 0u);
  EXPECT_EQ((*two)->Get(key), Artifact(1, 777));
  EXPECT_EQ((*two)->entries(), 1u);  // adopted
  EXPECT_EQ((*two)->total_bytes(), (*one)->total_bytes());

  // One removes it behind two's back: two misses and forgets it.
  fs::remove(fs::path(dir) / key);
  EXPECT_FALSE((*two)->Get(key).has_value());
  EXPECT_EQ((*two)->entries(), 0u);
  EXPECT_EQ((*two)->total_bytes(), 0u);
}

TEST(BuildCacheTest, ConcurrentPutAndGet) {
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  const int kKeys = 24;
  const size_t kPayload = 4000;
  // Room for about a third of the keys, so eviction runs constantly.
  auto opened = OpenAt(dir, 8 * (kPayload + 200));
  ASSERT_TRUE(opened.ok());
  BuildCache& cache = **opened;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back(KeyFor("k" + std::to_string(i)));

  std::atomic<int> wrong{0}, hits{0}, put_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        int k = (t * 7 + i * 13) % kKeys;
        // Each key always maps to the same bytes, as with real builds.
        if (std::optional<std::string> got = cache.Get(keys[k])) {
          ++hits;
          if (*got != Artifact(k, kPayload + k)) ++wrong;
        } else if (!cache.Put(keys[k], Artifact(k, kPayload + k)).ok()) {
          ++put_errors;
        }
      }
    });
  }
  for (auto& th : threads) th.join();

  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(put_errors.load(), 0);
  EXPECT_GT(hits.load(), 0);
  EXPECT_GT(cache.stats().evictions, 0u);
  EXPECT_EQ(cache.stats().corrupt, 0u);
  // The index agrees with the directory, and no temp file is left.
  uint64_t on_disk = 0;
  std::set<std::string> names = Listing(dir);
  for (const std::string& n : names) {
    EXPECT_TRUE(IsValidBuildKey(n)) << n;
    on_disk += fs::file_size(fs::path(dir) / n);
  }
  EXPECT_EQ(cache.entries(), names.size());
  EXPECT_EQ(cache.total_bytes(), on_disk);
  EXPECT_LE(cache.total_bytes(), 8 * (kPayload + 200));
}

TEST(BuildCacheTest, ConcurrentInstancesNeverSeeTornFiles) {
  // Two indexes (as two processes would have) hammering the same keys with
  // different-size payloads: every hit must be one complete payload.
  ScratchDir scratch;
  const std::string dir = scratch.path() + "/c";
  auto one = OpenAt(dir);
  auto two = OpenAt(dir);
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(two.ok());
  BuildCache* caches[2] = {one->get(), two->get()};
  const std::string key = KeyFor("contended");
  const std::string small = Artifact(1, 10), large = Artifact(2, 200000);
  std::atomic<int> bad{0}, hits{0}, writers_left{2};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) EXPECT_TRUE(caches[t]->Put(key, (i % 2) ? small : large).ok());
      --writers_left;
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      // Read until the writers are done, and at least once after.
      for (bool last = false; !last;) {
        last = writers_left.load() == 0;
        if (std::optional<std::string> got = caches[t]->Get(key)) {
          ++hits;
          if (*got != small && *got != large) ++bad;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(caches[0]->stats().corrupt + caches[1]->stats().corrupt, 0u);
  EXPECT_GT(hits.load(), 0);
}

}  // namespace
}  // namespace airlock::runtimes
