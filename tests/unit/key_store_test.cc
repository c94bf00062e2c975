// API keys: hashed at rest, shown once, revocation seen at once by another
// KeyStore on the same store (as `airlock keys revoke` and a running server,
// or two gateways). The store tests run against both backends: the JSON
// file (FileKeyStore) and PostgreSQL (PgKeyStore, a real server,
// pg_test_server.h); their names end in /File and /Postgres.
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <algorithm>
#include <atomic>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "auth/file_key_store.h"
#include "auth/key_store.h"
#include "auth/pg_key_store.h"
#include "base/encoding.h"
#include "pg_test_server.h"
#include "db/pg_database.h"

namespace airlock::auth {
namespace {

namespace fs = std::filesystem;

enum class Backend { kFile, kPostgres };

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kFile ? "File" : "Postgres";
}

class KeyStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / ("airlock-keys-" + std::to_string(getpid()) + "-" + name);
    fs::create_directories(dir_);
    path_ = (dir_ / "keys.json").string();
    if (GetParam() == Backend::kPostgres) {
      dsn_ = testing::PgTestServer::Get().NewDatabase();
      ASSERT_FALSE(dsn_.empty()) << testing::PgTestServer::Get().error();
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A store object (another process, another gateway: each its own).
  StatusOr<std::unique_ptr<KeyStore>> OpenStore() {
    if (GetParam() == Backend::kFile) return KeyStore::Open(path_);
    AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<state::PgDatabase> db, state::PgDatabase::Connect(dsn_));
    AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<PgKeyStore> store, PgKeyStore::Open(db));
    return std::unique_ptr<KeyStore>(std::move(store));
  }
  // Everything the store holds, as text (the file, or the table's rows).
  std::string StoredText() {
    if (GetParam() == Backend::kFile) {
      std::ifstream in(path_);
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }
    std::string out;
    pqxx::connection c(dsn_);
    pqxx::nontransaction tx(c);
    for (const pqxx::row& r : tx.exec("SELECT api_keys::text FROM api_keys")) out += r[0].as<std::string>() + "\n";
    return out;
  }
  fs::path dir_;
  std::string path_;  // file
  std::string dsn_;   // postgres
};

INSTANTIATE_TEST_SUITE_P(Backends, KeyStoreTest, ::testing::Values(Backend::kFile, Backend::kPostgres), BackendName);

TEST_P(KeyStoreTest, CreatedKeyAuthenticatesAndOnlyItsHashIsStored) {
  auto store = OpenStore();
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
  const std::string text = StoredText();
  EXPECT_EQ(text.find(k->secret), std::string::npos) << "the secret itself must never be stored";
  EXPECT_EQ(text.find(k->secret.substr(4)), std::string::npos);
  EXPECT_NE(text.find(Sha256Hex(k->secret)), std::string::npos);
  if (GetParam() == Backend::kFile) {
    struct stat st;
    ASSERT_EQ(stat(path_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
}

TEST_P(KeyStoreTest, WrongMalformedAndEmptyTokensAreRefused) {
  auto store = OpenStore();
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

TEST_P(KeyStoreTest, RevocationIsSeenImmediatelyByAnotherProcessView) {
  auto server = OpenStore();  // what `airlock serve` holds
  auto cli = OpenStore();     // what `airlock keys revoke` opens
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

TEST_P(KeyStoreTest, ConcurrentWritersLoseNoKey) {
  std::vector<std::thread> threads;
  std::vector<std::string> secrets(16);
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      auto store = OpenStore();  // separate store objects: separate processes' view
      ASSERT_TRUE(store.ok());
      StatusOr<NewKey> k = (*store)->Create("u" + std::to_string(i), "viewer", "");
      ASSERT_TRUE(k.ok()) << k.status().ToString();
      secrets[i] = k->secret;
    });
  }
  for (auto& t : threads) t.join();
  auto store = OpenStore();
  ASSERT_TRUE(store.ok());
  ASSERT_EQ((*store)->List()->size(), 16u);
  for (int i = 0; i < 16; ++i) {
    std::optional<Identity> who = (*store)->Authenticate(secrets[i]);
    ASSERT_TRUE(who.has_value()) << i;
    EXPECT_EQ(who->user, "u" + std::to_string(i));
  }
}

TEST_P(KeyStoreTest, BadInputAndACorruptStoreFailClosed) {
  auto store = OpenStore();
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Create("", "viewer", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*store)->Create("a b", "viewer", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*store)->Create("a", "role\n", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*store)->Create("a", "viewer", std::string("\xff")).status().code(), StatusCode::kInvalidArgument);
  StatusOr<NewKey> k = (*store)->Create("dave", "viewer", "");
  ASSERT_TRUE(k.ok());
  if (GetParam() == Backend::kFile) {
    std::ofstream(path_, std::ios::trunc) << "{ not json";
  } else {
    pqxx::connection c(dsn_);
    pqxx::nontransaction tx(c);
    tx.exec("ALTER TABLE api_keys RENAME TO api_keys_elsewhere");
  }
  EXPECT_FALSE((*store)->Authenticate(k->secret).has_value()) << "an unreadable store admits nobody";
  EXPECT_FALSE((*store)->IsActive(k->info.id));
  EXPECT_FALSE((*store)->List().ok());
  if (GetParam() == Backend::kFile) {
    EXPECT_FALSE(OpenStore().ok());
  }
}

// Two gateways on one database: a key revoked through one is refused by
// the other on its very next request (Authenticate reads the table each
// time), and a console sign-in made with it ends (IsActive).
TEST_P(KeyStoreTest, ARevocationThroughOneGatewayIsRefusedByAnotherAtOnce) {
  auto gateway_a = OpenStore();
  auto gateway_b = OpenStore();
  ASSERT_TRUE(gateway_a.ok() && gateway_b.ok());
  StatusOr<NewKey> k = (*gateway_a)->Create("frank", "admin", "console");
  ASSERT_TRUE(k.ok());
  ASSERT_TRUE((*gateway_b)->Authenticate(k->secret).has_value());
  ASSERT_TRUE((*gateway_b)->IsActive(k->info.id));
  ASSERT_TRUE((*gateway_a)->Revoke(k->info.id).ok());
  EXPECT_FALSE((*gateway_b)->Authenticate(k->secret).has_value());
  EXPECT_FALSE((*gateway_b)->IsActive(k->info.id));
  EXPECT_FALSE((*gateway_b)->IsActive("k_000000000000"));
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

TEST_P(KeyStoreTest, CliCreatesListsAndRevokes) {
  const std::string airlock = std::string(AIRLOCK_BINARY_DIR) + "/airlock keys ";
  // The file store by --file; the database by a config whose state.backend is postgres.
  std::string where = " --file " + path_;
  if (GetParam() == Backend::kPostgres) {
    const std::string config = (dir_ / "airlock.json").string();
    std::ofstream(config) << nlohmann::json{{"state", {{"backend", "postgres"}, {"postgres_dsn", dsn_}}}}.dump();
    where = " --config " + config;
    int rc = 0;
    Sh(airlock + "list --file " + path_ + where + " 2>/dev/null", &rc);
    EXPECT_EQ(rc, 2) << "--file does not go with a postgres config";
  }
  int rc = 0;
  std::string secret = Sh(airlock + "create" + where + " --user erin --role reader 2>/dev/null", &rc);
  ASSERT_EQ(rc, 0);
  while (!secret.empty() && secret.back() == '\n') secret.pop_back();
  auto store = OpenStore();
  ASSERT_TRUE(store.ok());
  std::optional<Identity> who = (*store)->Authenticate(secret);
  ASSERT_TRUE(who.has_value()) << secret;
  const std::string list = Sh(airlock + "list --json" + where, &rc);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(list.find(secret), std::string::npos) << "list never shows secrets";
  EXPECT_NE(list.find(who->key_id), std::string::npos);
  Sh(airlock + "revoke " + who->key_id + where + " 2>/dev/null", &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE((*store)->Authenticate(secret).has_value());
  Sh(airlock + "revoke k_000000000000" + where + " 2>/dev/null", &rc);
  EXPECT_EQ(rc, 2);
}

}  // namespace
}  // namespace airlock::auth
