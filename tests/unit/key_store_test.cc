// API keys: hashed at rest, shown once, revocation seen at once by another
// KeyStore on the same file (as `airlock keys revoke` and a running server).
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "auth/key_store.h"
#include "base/encoding.h"

namespace airlock::auth {
namespace {

namespace fs = std::filesystem;

class KeyStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("airlock-keys-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "keys.json").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string FileText() {
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(KeyStoreTest, CreatedKeyAuthenticatesAndOnlyItsHashIsStored) {
  auto store = KeyStore::Open(path_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  StatusOr<NewKey> k = (*store)->Create("alice", "operator", "laptop");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(k->secret.rfind("alk_", 0), 0u);
  EXPECT_EQ(k->secret.size(), 4u + 43u);
  std::optional<Identity> who = (*store)->Authenticate(k->secret);
  ASSERT_TRUE(who.has_value());
  EXPECT_EQ(who->user, "alice");
  EXPECT_EQ(who->role, "operator");
  EXPECT_EQ(who->key_id, k->info.id);
  const std::string text = FileText();
  EXPECT_EQ(text.find(k->secret), std::string::npos) << "the secret itself must never be stored";
  EXPECT_EQ(text.find(k->secret.substr(4)), std::string::npos);
  EXPECT_NE(text.find(Sha256Hex(k->secret)), std::string::npos);
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(KeyStoreTest, WrongMalformedAndEmptyTokensAreRefused) {
  auto store = KeyStore::Open(path_);
  ASSERT_TRUE(store.ok());
  StatusOr<NewKey> k = (*store)->Create("bob", "viewer", "");
  ASSERT_TRUE(k.ok());
  std::string wrong = k->secret;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE((*store)->Authenticate(wrong).has_value());
  EXPECT_FALSE((*store)->Authenticate("").has_value());
  EXPECT_FALSE((*store)->Authenticate(k->secret.substr(4)).has_value());  // without the prefix
  EXPECT_FALSE((*store)->Authenticate(Sha256Hex(k->secret)).has_value()); // the stored hash is no key
  EXPECT_FALSE((*store)->Authenticate(k->secret + std::string(300, 'x')).has_value());
}

TEST_F(KeyStoreTest, RevocationIsSeenImmediatelyByAnotherProcessView) {
  auto server = KeyStore::Open(path_);  // what `airlock serve` holds
  auto cli = KeyStore::Open(path_);     // what `airlock keys revoke` opens
  ASSERT_TRUE(server.ok() && cli.ok());
  StatusOr<NewKey> k = (*cli)->Create("carol", "admin", "ci");
  ASSERT_TRUE(k.ok());
  ASSERT_TRUE((*server)->Authenticate(k->secret).has_value()) << "a new key works at once";
  ASSERT_TRUE((*cli)->Revoke(k->info.id).ok());
  EXPECT_FALSE((*server)->Authenticate(k->secret).has_value()) << "revoked, and the server must see it now";
  StatusOr<std::vector<KeyInfo>> list = (*server)->List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_GT((*list)[0].revoked_at, 0);
  EXPECT_TRUE((*cli)->Revoke(k->info.id).ok()) << "revoking twice is fine";
  EXPECT_EQ((*cli)->Revoke("k_000000000000").code(), StatusCode::kNotFound);
}

TEST_F(KeyStoreTest, ConcurrentWritersLoseNoKey) {
  std::vector<std::thread> threads;
  std::vector<std::string> secrets(16);
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      auto store = KeyStore::Open(path_);  // separate store objects: separate processes' view
      ASSERT_TRUE(store.ok());
      StatusOr<NewKey> k = (*store)->Create("u" + std::to_string(i), "viewer", "");
      ASSERT_TRUE(k.ok()) << k.status().ToString();
      secrets[i] = k->secret;
    });
  }
  for (auto& t : threads) t.join();
  auto store = KeyStore::Open(path_);
  ASSERT_TRUE(store.ok());
  ASSERT_EQ((*store)->List()->size(), 16u);
  for (int i = 0; i < 16; ++i) {
    std::optional<Identity> who = (*store)->Authenticate(secrets[i]);
    ASSERT_TRUE(who.has_value()) << i;
    EXPECT_EQ(who->user, "u" + std::to_string(i));
  }
}

TEST_F(KeyStoreTest, BadInputAndACorruptFileFailClosed) {
  auto store = KeyStore::Open(path_);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Create("", "viewer", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*store)->Create("a b", "viewer", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*store)->Create("a", "role\n", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*store)->Create("a", "viewer", std::string("\xff")).status().code(), StatusCode::kInvalidArgument);
  StatusOr<NewKey> k = (*store)->Create("dave", "viewer", "");
  ASSERT_TRUE(k.ok());
  std::ofstream(path_, std::ios::trunc) << "{ not json";
  EXPECT_FALSE((*store)->Authenticate(k->secret).has_value()) << "an unreadable store admits nobody";
  EXPECT_FALSE(KeyStore::Open(path_).ok());
}

// `airlock keys`: the CLI an operator uses, against the same file.
std::string Sh(const std::string& cmd, int* rc) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST_F(KeyStoreTest, CliCreatesListsAndRevokes) {
  const std::string airlock = std::string(AIRLOCK_BINARY_DIR) + "/airlock keys ";
  int rc = 0;
  std::string secret = Sh(airlock + "create --file " + path_ + " --user erin --role viewer 2>/dev/null", &rc);
  ASSERT_EQ(rc, 0);
  while (!secret.empty() && secret.back() == '\n') secret.pop_back();
  auto store = KeyStore::Open(path_);
  ASSERT_TRUE(store.ok());
  std::optional<Identity> who = (*store)->Authenticate(secret);
  ASSERT_TRUE(who.has_value()) << secret;
  const std::string list = Sh(airlock + "list --json --file " + path_, &rc);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(list.find(secret), std::string::npos) << "list never shows secrets";
  EXPECT_NE(list.find(who->key_id), std::string::npos);
  Sh(airlock + "revoke " + who->key_id + " --file " + path_ + " 2>/dev/null", &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE((*store)->Authenticate(secret).has_value());
  Sh(airlock + "revoke k_000000000000 --file " + path_ + " 2>/dev/null", &rc);
  EXPECT_EQ(rc, 2);
}

}  // namespace
}  // namespace airlock::auth
