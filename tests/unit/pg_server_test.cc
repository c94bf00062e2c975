// PostgreSQL groundwork (issue 22): the test server (tests/pg/pg_server.sh,
// PgTestServer), state::PgDatabase (DSNs, errors, reconnecting, the pool)
// and the versioned schema migrations (db/pg_migrations.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "audit/pg_audit_store.h"
#include "pg_test_server.h"
#include "db/pg_database.h"
#include "db/pg_migrations.h"

namespace airlock::testing {
namespace {

const std::string kScript = std::string(AIRLOCK_SOURCE_DIR) + "/tests/pg/pg_server.sh";

// A port nobody listens on right now.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Runs `cmd` through sh; its exit code and stdout.
int Shell(const std::string& cmd, std::string* out = nullptr) {
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int status = pclose(p);
  if (out != nullptr) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadFile(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

std::string LastLine(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

// The directory above the server's (the mkdtemp one, removed at the end).
std::string BaseOf(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

// Stops the process's server after the last test.
class PgEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { PgTestServer::StopIfStarted(); }
};

[[maybe_unused]] ::testing::Environment* const kPgEnvironment =
    ::testing::AddGlobalTestEnvironment(new PgEnvironment);

}  // namespace

PgTestServer& PgTestServer::Instance() {
  static PgTestServer* server = new PgTestServer();  // never destroyed: the environment stops it
  return *server;
}

PgTestServer& PgTestServer::Get() {
  PgTestServer& server = Instance();
  std::lock_guard<std::mutex> lock(server.mu_);
  if (!server.started_) server.Start();
  return server;
}

void PgTestServer::StopIfStarted() { Instance().Stop(); }

void PgTestServer::Start() {
  started_ = true;
  char base[] = "/tmp/airlock-pg-XXXXXX";
  if (mkdtemp(base) == nullptr) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = std::string(base) + "/pg";
  const std::string log = std::string(base) + "/start.log";
  const std::string templ = "/tmp/airlock-pg-template-" + std::to_string(geteuid());
  for (int attempt = 0; attempt < 3 && dsn_.empty(); ++attempt) {
    port_ = FreePort();
    std::string out;
    const int rc = Shell("AIRLOCK_PG_TEMPLATE=" + templ + " " + kScript + " start " + dir_ + " " +
                             std::to_string(port_) + " 2>>" + log,
                         &out);
    if (rc == 0) dsn_ = LastLine(out);
  }
  if (dsn_.empty()) {
    error_ = "tests/pg/pg_server.sh could not start PostgreSQL 15:\n" + ReadFile(log);
    return;
  }
  // Should this process die without stopping it, the server goes too.
  const std::string watchdog = "setsid sh -c 'while kill -0 " + std::to_string(getpid()) +
                               " 2>/dev/null; do sleep 1; done; " + kScript + " stop " + dir_ + "; rm -rf " +
                               std::string(base) + "' </dev/null >/dev/null 2>&1 &";
  const int rc = std::system(watchdog.c_str());  // best effort
  (void)rc;
}

void PgTestServer::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (dir_.empty()) return;
  Shell(kScript + " stop " + dir_ + " >/dev/null 2>&1; rm -rf " + BaseOf(dir_));
  dir_.clear();
  dsn_.clear();
  error_ = "the test server was stopped";
}

std::string PgTestServer::NewDatabase() {
  std::lock_guard<std::mutex> lock(mu_);
  if (dsn_.empty()) return "";
  const std::string name = "t" + std::to_string(++databases_);
  try {
    pqxx::connection admin(SuperuserDsn());
    pqxx::nontransaction tx(admin);
    tx.exec("CREATE DATABASE " + name + " OWNER airlock ENCODING 'UTF8' TEMPLATE template0");
  } catch (const std::exception& e) {
    error_ = std::string("CREATE DATABASE: ") + e.what();
    return "";
  }
  return std::regex_replace(dsn_, std::regex("dbname=airlock"), "dbname=" + name);
}

std::string PgTestServer::SuperuserDsn(const std::string& dbname) const {
  return "host=" + dir_ + " port=" + std::to_string(port_) + " user=postgres dbname=" + dbname;
}

std::string PgTestServer::DatabaseOf(const std::string& dsn) {
  std::smatch m;
  return std::regex_search(dsn, m, std::regex("dbname=([^ ]+)")) ? m[1].str() : "";
}

namespace {

class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dsn_ = PgTestServer::Get().NewDatabase();
    ASSERT_FALSE(dsn_.empty()) << PgTestServer::Get().error();
  }
  std::shared_ptr<state::PgDatabase> Connect(state::PgDatabase::Options options = {}) {
    auto db = state::PgDatabase::Connect(dsn_, options);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? *db : nullptr;
  }
  // Runs `sql` as the superuser in this test's database.
  void AsSuperuser(const std::string& sql) {
    pqxx::connection c(PgTestServer::Get().SuperuserDsn(PgTestServer::DatabaseOf(dsn_)));
    pqxx::nontransaction tx(c);
    tx.exec(sql);
  }
  std::string dsn_;
};

// --- the server ----------------------------------------------------------------

TEST_F(PgTest, TheScriptsServerIsPostgres15WithPasswordAuth) {
  pqxx::connection c(dsn_);
  pqxx::nontransaction tx(c);
  EXPECT_EQ(tx.exec1("SELECT current_user")[0].as<std::string>(), "airlock");
  EXPECT_EQ(tx.exec1("SHOW server_version_num")[0].as<std::string>().substr(0, 2), "15");
  EXPECT_EQ(tx.exec1("SHOW server_encoding")[0].as<std::string>(), "UTF8");
  const std::string wrong = std::regex_replace(dsn_, std::regex("password=[^ ]+"), "password=wrong");
  EXPECT_THROW(pqxx::connection{wrong}, pqxx::broken_connection) << "TCP needs the password";
  EXPECT_NE(PgTestServer::Get().dsn().find("dbname=airlock user=airlock password="), std::string::npos);
}

TEST(PgServerScriptTest, StartsStopsRestartsAndStopIsIdempotent) {
  char base[] = "/tmp/airlock-pg-script-XXXXXX";
  ASSERT_NE(mkdtemp(base), nullptr);
  const std::string dir = std::string(base) + "/pg";
  const std::string templ = "AIRLOCK_PG_TEMPLATE=/tmp/airlock-pg-template-" + std::to_string(geteuid()) + " ";
  const int port = FreePort();
  std::string out;
  ASSERT_EQ(Shell(templ + kScript + " start " + dir + " " + std::to_string(port) + " 2>/dev/null", &out), 0);
  const std::string dsn = LastLine(out);
  EXPECT_EQ(dsn.rfind("host=127.0.0.1 port=" + std::to_string(port) + " dbname=airlock user=airlock password=", 0),
            0u)
      << dsn;
  { pqxx::connection c(dsn); }
  // A second start finds it running and prints the same DSN.
  ASSERT_EQ(Shell(kScript + " start " + dir + " " + std::to_string(port) + " 2>/dev/null", &out), 0);
  EXPECT_EQ(LastLine(out), dsn);
  EXPECT_EQ(Shell(kScript + " stop " + dir + " 2>/dev/null"), 0);
  EXPECT_THROW(pqxx::connection{dsn}, pqxx::broken_connection);
  EXPECT_EQ(Shell(kScript + " stop " + dir + " 2>/dev/null"), 0) << "stopping twice is fine";
  EXPECT_EQ(Shell(kScript + " stop " + std::string(base) + "/never-started 2>/dev/null"), 0);
  // Started again on the same directory: the same role, password and data.
  ASSERT_EQ(Shell(kScript + " start " + dir + " " + std::to_string(port) + " 2>/dev/null", &out), 0);
  EXPECT_EQ(LastLine(out), dsn);
  { pqxx::connection c(dsn); }
  EXPECT_EQ(Shell(kScript + " stop " + dir + " 2>/dev/null"), 0);
  EXPECT_EQ(Shell(kScript + " start " + dir + " 2>/dev/null"), 2) << "usage";
  Shell("rm -rf " + std::string(base));
}

// --- DSNs and errors -------------------------------------------------------------

TEST(PgDsnTest, PasswordsAreRedacted) {
  EXPECT_EQ(state::RedactDsn("host=db port=5432 user=a password=s3cret dbname=x"),
            "host=db port=5432 user=a password=*** dbname=x");
  EXPECT_EQ(state::RedactDsn("password = 'it\\'s a \\\\ secret' host=db"), "password = *** host=db");
  EXPECT_EQ(state::RedactDsn("host=db"), "host=db");
  EXPECT_EQ(state::RedactDsn("postgresql://alice:s3cret@db:5432/x?sslmode=require"),
            "postgresql://alice:***@db:5432/x?sslmode=require");
  EXPECT_EQ(state::RedactDsn("postgres://db/x?user=a&password=s3cret&sslmode=off"),
            "postgres://db/x?user=a&password=***&sslmode=off");
}

TEST(PgDsnTest, DefaultsAreAddedOnlyWhenMissing) {
  EXPECT_EQ(state::DsnWithDefault("host=db", "connect_timeout", "5"), "host=db connect_timeout=5");
  EXPECT_EQ(state::DsnWithDefault("", "connect_timeout", "5"), "connect_timeout=5");
  EXPECT_EQ(state::DsnWithDefault("host=db connect_timeout=9", "connect_timeout", "5"), "host=db connect_timeout=9");
  EXPECT_EQ(state::DsnWithDefault("postgresql://db/x", "connect_timeout", "5"), "postgresql://db/x?connect_timeout=5");
  EXPECT_EQ(state::DsnWithDefault("postgresql://db/x?sslmode=off", "connect_timeout", "5"),
            "postgresql://db/x?sslmode=off&connect_timeout=5");
}

TEST(PgDatabaseErrorsTest, AnUnreachableDatabaseIsUnavailableAndNamesNoPassword) {
  const std::string dsn = "host=127.0.0.1 port=" + std::to_string(FreePort()) + " dbname=x user=y password=s3cret";
  auto db = state::PgDatabase::Connect(dsn);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kUnavailable) << db.status().ToString();
  EXPECT_NE(db.status().message().find("host=127.0.0.1"), std::string::npos) << db.status().message();
  EXPECT_EQ(db.status().message().find("s3cret"), std::string::npos) << db.status().message();
}

TEST_F(PgTest, ABodysErrorRollsBackAndSqlErrorsBecomeStatuses) {
  auto db = Connect();
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->Transact([](pqxx::transaction_base& tx) {
                  tx.exec("CREATE TABLE t (v TEXT NOT NULL)");
                  return OkStatus();
                }).ok());
  Status st = db->Transact([](pqxx::transaction_base& tx) {
    tx.exec("INSERT INTO t VALUES ('rolled back')");
    return FailedPrecondition("changed my mind");
  });
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  st = db->Transact([](pqxx::transaction_base& tx) {
    tx.exec("INSERT INTO t VALUES (NULL)");
    return OkStatus();
  });
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("null value"), std::string::npos) << st.message();
  std::smatch password;
  ASSERT_TRUE(std::regex_search(dsn_, password, std::regex("password=([^ ]+)")));
  EXPECT_EQ(st.message().find(password[1].str()), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("password=***"), std::string::npos) << st.message();
  int64_t n = -1;
  ASSERT_TRUE(db->Snapshot([&](pqxx::transaction_base& tx) {
                  n = tx.exec1("SELECT count(*) FROM t")[0].as<int64_t>();
                  return OkStatus();
                }).ok());
  EXPECT_EQ(n, 0);
  st = db->Snapshot([](pqxx::transaction_base& tx) {
    tx.exec("INSERT INTO t VALUES ('x')");
    return OkStatus();
  });
  EXPECT_FALSE(st.ok()) << "a snapshot is read-only";
}

TEST_F(PgTest, ABrokenConnectionIsReplaced) {
  auto db = Connect();
  ASSERT_TRUE(db);
  int backend = 0;
  ASSERT_TRUE(db->Transact([&](pqxx::transaction_base& tx) {
                  backend = tx.exec1("SELECT pg_backend_pid()")[0].as<int>();
                  return OkStatus();
                }).ok());
  // The server ends every session of the database (a restart, a failover).
  AsSuperuser("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
              PgTestServer::DatabaseOf(dsn_) + "' AND pid <> pg_backend_pid()");
  int again = 0;
  Status st = db->Transact([&](pqxx::transaction_base& tx) {
    again = tx.exec1("SELECT pg_backend_pid()")[0].as<int>();
    return OkStatus();
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(again, backend) << "a new connection";
}

TEST_F(PgTest, ThePoolServesMoreThreadsThanConnections) {
  state::PgDatabase::Options options;
  options.max_connections = 2;
  auto db = Connect(options);
  ASSERT_TRUE(db);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 5; ++k) {
        Status st = db->Transact([](pqxx::transaction_base& tx) {
          tx.exec("SELECT pg_sleep(0.01)");
          return OkStatus();
        });
        if (st.ok()) ++ok;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), 40);
  int64_t sessions = 0;
  pqxx::connection c(PgTestServer::Get().SuperuserDsn());
  pqxx::nontransaction tx(c);
  sessions = tx.exec1("SELECT count(*) FROM pg_stat_activity WHERE datname = '" + PgTestServer::DatabaseOf(dsn_) +
                      "' AND usename = 'airlock'")[0]
                 .as<int64_t>();
  EXPECT_LE(sessions, 2);
}

// --- migrations --------------------------------------------------------------------

TEST_F(PgTest, MigrationsAreAppliedOnceInOrder) {
  auto db = Connect();
  ASSERT_TRUE(db);
  EXPECT_EQ(*state::PgSchemaVersion(*db), 0);
  EXPECT_EQ(state::CheckPgSchema(*db, state::kPgSchemaAuditLog).code(), StatusCode::kNotFound);
  ASSERT_TRUE(state::MigratePg(*db).ok());
  EXPECT_EQ(*state::PgSchemaVersion(*db), static_cast<int>(state::PgMigrations().size()));
  EXPECT_TRUE(state::CheckPgSchema(*db, state::kPgSchemaApiKeys).ok());
  std::vector<std::string> names, applied_at;
  auto read = [&] {
    names.clear();
    applied_at.clear();
    return db->Transact([&](pqxx::transaction_base& tx) {
      for (const pqxx::row& r : tx.exec("SELECT name, applied_at FROM airlock_schema_migrations ORDER BY version")) {
        names.push_back(r[0].as<std::string>());
        applied_at.push_back(r[1].as<std::string>());
      }
      return OkStatus();
    });
  };
  ASSERT_TRUE(read().ok());
  EXPECT_EQ(names, (std::vector<std::string>{"audit log", "code tools", "api keys", "mcp tasks", "code sessions",
                                             "code session mode"}));
  const std::vector<std::string> first = applied_at;
  ASSERT_TRUE(state::MigratePg(*db).ok()) << "up to date: nothing to do";
  ASSERT_TRUE(read().ok());
  EXPECT_EQ(applied_at, first);
}

TEST_F(PgTest, GatewaysStartingTogetherMigrateOnce) {
  constexpr int kGateways = 6;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kGateways; ++i) {
    threads.emplace_back([&] {
      auto db = state::PgDatabase::Connect(dsn_);  // each its own connections
      if (!db.ok() || !state::MigratePg(**db).ok()) ++failures;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto db = Connect();
  ASSERT_TRUE(db);
  int64_t rows = 0;
  ASSERT_TRUE(db->Transact([&](pqxx::transaction_base& tx) {
                  rows = tx.exec1("SELECT count(*) FROM airlock_schema_migrations")[0].as<int64_t>();
                  return OkStatus();
                }).ok());
  EXPECT_EQ(rows, static_cast<int64_t>(state::PgMigrations().size()));
}

TEST_F(PgTest, ADatabaseNewerThanTheBinaryIsRefused) {
  auto db = Connect();
  ASSERT_TRUE(db);
  ASSERT_TRUE(state::MigratePg(*db).ok());
  ASSERT_TRUE(db->Transact([](pqxx::transaction_base& tx) {
                  tx.exec("INSERT INTO airlock_schema_migrations (version, name) VALUES (99, 'from the future')");
                  return OkStatus();
                }).ok());
  Status st = state::MigratePg(*db);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("version 99"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("newer than this airlock"), std::string::npos) << st.message();
  auto store = audit::PgAuditStore::Open(db);
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition) << "no store on a schema it does not know";
  EXPECT_EQ(audit::PgAuditStore::OpenExisting(db).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(PgTest, AMigrationIsAllOrNothing) {
  auto db = Connect();
  ASSERT_TRUE(db);
  std::vector<state::PgMigration> more = state::PgMigrations();
  const int next = static_cast<int>(more.size()) + 1;  // one past airlock's own
  more.push_back({next, "half done", "CREATE TABLE half (x INT); SELECT no_such_function();"});
  Status st = state::MigratePg(*db, more);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("migration " + std::to_string(next)), std::string::npos) << st.message();
  EXPECT_EQ(*state::PgSchemaVersion(*db), next - 1) << "the earlier ones stay applied";
  bool half = true;
  ASSERT_TRUE(db->Transact([&](pqxx::transaction_base& tx) {
                  half = tx.exec1("SELECT to_regclass('half') IS NOT NULL")[0].as<bool>();
                  return OkStatus();
                }).ok());
  EXPECT_FALSE(half) << "nothing of the failed migration remains";
  more.back() = {next, "fixed", "CREATE TABLE half (x INT)"};
  ASSERT_TRUE(state::MigratePg(*db, more).ok());
  EXPECT_EQ(*state::PgSchemaVersion(*db), next);
  more.back().name = "renamed";
  st = state::MigratePg(*db, more);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << "that version is another migration here";
}

}  // namespace
}  // namespace airlock::testing
