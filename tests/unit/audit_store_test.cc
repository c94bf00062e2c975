// The audit log (issue 5): rows round-trip and filter, the hash chain
// catches an edited or deleted row made behind the store's back (raw SQL on
// the file or the database), concurrent appends keep one valid chain, the
// file is private, and call arguments are redacted by the documented rule.
// The store tests run against both backends, SQLite and PostgreSQL (a real
// server, pg_test_server.h; issue 22): their names end in /Sqlite and
// /Postgres. PgAuditStoreTest proves one chain under writers in several
// processes and threads at once.
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "audit/audit_store.h"
#include "audit/pg_audit_store.h"
#include "audit/redaction.h"
#include "audit/sqlite_audit_store.h"
#include "pg_test_server.h"
#include "db/pg_database.h"

namespace airlock::audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

enum class Backend { kSqlite, kPostgres };

int64_t NowMsForTest() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

class AuditStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / ("airlock-audit-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "audit.db").string();
    if (!sqlite()) {
      dsn_ = testing::PgTestServer::Get().NewDatabase();
      ASSERT_FALSE(dsn_.empty()) << testing::PgTestServer::Get().error();
    }
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  bool sqlite() const { return GetParam() == Backend::kSqlite; }

  // A store object on the test's file or database (several may share it).
  std::unique_ptr<AuditStore> OpenStore() {
    if (sqlite()) {
      SqliteAuditStore::Options opts;
      opts.now_ms = [this] { return clock_.load(); };
      auto store = SqliteAuditStore::Open(path_, opts);
      EXPECT_TRUE(store.ok()) << store.status().ToString();
      return store.ok() ? std::move(*store) : nullptr;
    }
    auto db = state::PgDatabase::Connect(dsn_);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return nullptr;
    PgAuditStore::Options opts;
    opts.now_ms = [this] { return clock_.load(); };
    auto store = PgAuditStore::Open(*db, opts);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Runs `sql` through a separate, raw connection: what someone with write
  // access to the file or the database could do. It must change one row.
  void Tamper(const char* sql) { RawSql(sql, /*expect_one_row=*/true); }

  void RawSql(const std::string& sql, bool expect_one_row) {
    if (!sqlite()) {
      try {
        pqxx::connection c(dsn_);
        pqxx::nontransaction tx(c);
        pqxx::result r = tx.exec(sql);
        if (expect_one_row) {
          EXPECT_EQ(r.affected_rows(), 1u) << sql;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << sql << ": " << e.what();
      }
      return;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    if (expect_one_row) {
      EXPECT_EQ(sqlite3_changes(db), 1) << sql;
    }
    sqlite3_free(err);
    sqlite3_close(db);
  }

  static RunRecord Run(const std::string& id, const std::string& user) {
    RunRecord r;
    r.run_id = id;
    r.started_at = 1000;
    r.ended_at = 1250;
    r.duration_ms = 250;
    r.user = user;
    r.role = "analyst";
    r.endpoint = "main";
    r.client = "claude-code/1.0";
    r.kind = "inline";
    r.language = "javascript";
    r.code = "return await tools.call('crm.get', {id: 1});";
    r.code_sha256 = std::string(64, 'c');
    r.connectors = json::array({"crm"});
    r.limits = {{"max_calls", 50}, {"timeout_ms", 30000}};
    r.status = "SUCCESS";
    r.calls_total = 2;
    r.calls_denied = 1;
    r.console_bytes = 12;
    r.result_bytes = 34;
    return r;
  }
  static CallRow Call(const std::string& run_id, int64_t seq, bool denied) {
    CallRow c;
    c.run_id = run_id;
    c.seq = seq;
    c.connector = "crm";
    c.tool = denied ? "delete_contact" : "get_contact";
    c.effective_class = denied ? "write" : "read";
    c.decision = denied ? "denied" : "allowed";
    c.reason = denied ? "write_not_allowed" : "";
    c.args_sha256 = std::string(64, 'a');
    c.args_redacted = {{"id", seq}, {"token", "[redacted]"}};
    c.result_status = denied ? "" : "ok";
    c.result_bytes = denied ? 0 : 99;
    c.duration_ms = 3;
    return c;
  }
  static EventRow Event(const std::string& kind, const std::string& actor) {
    return EventRow{.at = 5000, .kind = kind, .actor = actor, .target = "k_0123",
                    .detail = {{"role", "analyst"}}};
  }

  // ids 1..7: run r1 (alice) + 2 calls, event by alice, run r2 (bob) + 1 call, event by bob.
  void AppendSample(AuditStore& store) {
    clock_ = 100;
    ASSERT_TRUE(store.AppendCall(Call("r1", 1, false)).ok());
    ASSERT_TRUE(store.AppendCall(Call("r1", 2, true)).ok());
    ASSERT_TRUE(store.AppendRun(Run("r1", "alice")).ok());
    ASSERT_TRUE(store.AppendEvent(Event("key_create", "alice")).ok());
    clock_ = 200;
    ASSERT_TRUE(store.AppendCall(Call("r2", 1, false)).ok());
    ASSERT_TRUE(store.AppendRun(Run("r2", "bob")).ok());
    ASSERT_TRUE(store.AppendEvent(Event("approve", "bob")).ok());
  }

  static std::vector<int64_t> Ids(const std::vector<AuditRow>& rows) {
    std::vector<int64_t> ids;
    for (const AuditRow& r : rows) ids.push_back(r.id);
    return ids;
  }

  fs::path dir_;
  std::string path_;  // sqlite
  std::string dsn_;   // postgres
  std::atomic<int64_t> clock_{1};
};

INSTANTIATE_TEST_SUITE_P(Backends, AuditStoreTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

TEST_P(AuditStoreTest, RowsRoundTripInChainOrder) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  AppendSample(*store);
  auto rows = store->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(Ids(*rows), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));

  const CallRow* denied = (*rows)[1].call();
  ASSERT_NE(denied, nullptr);
  EXPECT_EQ(denied->run_id, "r1");
  EXPECT_EQ(denied->seq, 2);
  EXPECT_EQ(denied->tool, "delete_contact");
  EXPECT_EQ(denied->decision, "denied");
  EXPECT_EQ(denied->reason, "write_not_allowed");
  EXPECT_EQ(denied->args_redacted, (json{{"id", 2}, {"token", "[redacted]"}}));
  EXPECT_EQ((*rows)[1].recorded_at, 100);

  const RunRecord* run = (*rows)[2].run();
  ASSERT_NE(run, nullptr);
  const RunRecord want = Run("r1", "alice");
  EXPECT_EQ(run->run_id, want.run_id);
  EXPECT_EQ(run->user, "alice");
  EXPECT_EQ(run->role, want.role);
  EXPECT_EQ(run->client, want.client);
  EXPECT_EQ(run->code, want.code);
  EXPECT_EQ(run->connectors, want.connectors);
  EXPECT_EQ(run->limits, want.limits);
  EXPECT_EQ(run->duration_ms, 250);
  EXPECT_EQ(run->calls_denied, 1);
  EXPECT_EQ(run->result_bytes, 34);

  const EventRow* ev = (*rows)[6].event();
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->kind, "approve");
  EXPECT_EQ(ev->actor, "bob");
  EXPECT_EQ(ev->at, 5000);
  EXPECT_EQ(ev->detail, (json{{"role", "analyst"}}));
}

TEST_P(AuditStoreTest, QueryFilters) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  AppendSample(*store);
  auto by_user = store->Query({.user = "alice"});
  ASSERT_TRUE(by_user.ok());
  EXPECT_EQ(Ids(*by_user), (std::vector<int64_t>{1, 2, 3, 4})) << "alice's run, its calls, her event";
  auto by_run = store->Query({.run_id = "r2"});
  ASSERT_TRUE(by_run.ok());
  EXPECT_EQ(Ids(*by_run), (std::vector<int64_t>{5, 6})) << "the run and its call, no events";
  auto since = store->Query({.since = 150});
  ASSERT_TRUE(since.ok());
  EXPECT_EQ(Ids(*since), (std::vector<int64_t>{5, 6, 7}));
  auto both = store->Query({.since = 150, .user = "alice"});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->empty());
  auto newest = store->Query({.limit = 2});
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(Ids(*newest), (std::vector<int64_t>{6, 7}));
  auto none = store->Query({.user = "mallory"});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // A value that would break string-built SQL is only ever a bound parameter.
  auto injection = store->Query({.user = "x' OR '1'='1"});
  ASSERT_TRUE(injection.ok());
  EXPECT_TRUE(injection->empty());
  EXPECT_EQ(store->Query({.limit = 0}).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(AuditStoreTest, VerifyAcceptsAnUntouchedStore) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  auto empty = store->Verify();
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->ok());
  EXPECT_EQ(empty->rows_checked, 0);
  AppendSample(*store);
  auto report = store->Verify();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << report->problem->ToString();
  EXPECT_EQ(report->rows_checked, 7);
  EXPECT_EQ(report->last_id, 7);
  EXPECT_EQ(report->head_hash.size(), 64u);
  EXPECT_NE(report->head_hash, empty->head_hash);
}

TEST_P(AuditStoreTest, ARunWithItsCallsIsOneAtomicWrite) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AppendRunWithCalls(Run("r_9", "dana"), {Call("r_9", 1, false), Call("r_9", 2, true)}).ok());
  auto rows = store->Query({.run_id = "r_9"});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].call()->seq, 1);
  EXPECT_EQ((*rows)[1].call()->seq, 2);
  ASSERT_NE((*rows)[2].run(), nullptr);
  auto report = store->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->rows_checked, 3);
  // A failing row (here: a trigger refuses run rows) leaves none of the batch behind.
  if (sqlite()) {
    RawSql("CREATE TRIGGER no_runs BEFORE INSERT ON audit_runs BEGIN SELECT RAISE(ABORT, 'refused'); END", false);
  } else {
    RawSql("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;"
           "CREATE TRIGGER no_runs BEFORE INSERT ON audit_runs FOR EACH ROW EXECUTE FUNCTION refuse()",
           false);
  }
  EXPECT_FALSE(store->AppendRunWithCalls(Run("r_10", "dana"), {Call("r_10", 1, false)}).ok());
  auto after = store->Query({.run_id = "r_10"});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty()) << "the call row was rolled back with the run row";
}

TEST_P(AuditStoreTest, ReopenedStoreContinuesTheChain) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    AppendSample(*store);
  }
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AppendEvent(Event("key_revoke", "root")).ok());
  auto report = store->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->problem->ToString();
  EXPECT_EQ(report->last_id, 8);
}

TEST_P(AuditStoreTest, VerifyReportsAnEditedRow) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  AppendSample(*store);
  Tamper("UPDATE audit_calls SET decision = 'allowed' WHERE id = 2");
  auto report = store->Verify();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->problem->kind, VerifyProblem::Kind::kModified);
  EXPECT_EQ(report->problem->table, "calls");
  EXPECT_EQ(report->problem->id, 2);
  EXPECT_NE(report->problem->ToString().find("modified: calls id 2"), std::string::npos)
      << report->problem->ToString();
}

TEST_P(AuditStoreTest, VerifyReportsAnEditedIntegerAndJsonField) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  AppendSample(*store);
  Tamper("UPDATE audit_runs SET calls_denied = 0 WHERE id = 6");
  auto report = store->Verify();
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->problem->kind, VerifyProblem::Kind::kModified);
  EXPECT_EQ(report->problem->table, "runs");
  EXPECT_EQ(report->problem->id, 6);
}

TEST_P(AuditStoreTest, VerifyReportsADeletedMiddleRow) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  AppendSample(*store);
  Tamper("DELETE FROM audit_runs WHERE id = 3");
  auto report = store->Verify();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->problem->kind, VerifyProblem::Kind::kDeleted);
  EXPECT_EQ(report->problem->table, "events") << "the row after the gap";
  EXPECT_EQ(report->problem->id, 4);
  EXPECT_NE(report->problem->detail.find("row id 3 is missing"), std::string::npos)
      << report->problem->ToString();
}

TEST_P(AuditStoreTest, VerifyReportsADeletedRowWhoseGapWasClosed) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  AppendSample(*store);
  // Remove row 3 and renumber row 4 into its place: no gap, but row 4's
  // content (its id) and its prev_hash no longer fit.
  Tamper("DELETE FROM audit_runs WHERE id = 3");
  Tamper("UPDATE audit_events SET id = 3 WHERE id = 4");
  auto report = store->Verify();
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->problem->table, "events");
  EXPECT_EQ(report->problem->id, 3);
}

TEST_P(AuditStoreTest, VerifyReportsADeletedLastRow) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  AppendSample(*store);
  Tamper("DELETE FROM audit_events WHERE id = 7");
  auto report = store->Verify();
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->problem->kind, VerifyProblem::Kind::kDeleted);
  EXPECT_EQ(report->problem->table, "head");
  EXPECT_EQ(report->problem->id, 7);
}

TEST_P(AuditStoreTest, ConcurrentAppendsKeepOneValidChain) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  constexpr int kThreads = 8, kPerThread = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string run_id = "r" + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i) {
        Status st = i % 3 == 0   ? store->AppendRun(Run(run_id, "u" + std::to_string(t)))
                    : i % 3 == 1 ? store->AppendCall(Call(run_id, i, i % 2 == 0))
                                 : store->AppendEvent(Event("tool_call", "u" + std::to_string(t)));
        if (!st.ok()) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto report = store->Verify();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << report->problem->ToString();
  EXPECT_EQ(report->rows_checked, kThreads * kPerThread);
  auto rows = store->Query({.limit = 10000});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), static_cast<size_t>(kThreads * kPerThread));
  for (size_t i = 0; i < rows->size(); ++i) EXPECT_EQ((*rows)[i].id, static_cast<int64_t>(i + 1));
}

TEST_P(AuditStoreTest, TwoStoresOnOneFileShareTheChain) {
  auto a = OpenStore();
  auto b = OpenStore();
  ASSERT_TRUE(a && b);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((i % 2 ? a : b)->AppendEvent(Event("tool_call", "u")).ok());
  }
  auto report = a->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->problem->ToString();
  EXPECT_EQ(report->last_id, 10);
}

class SqliteAuditStoreTest : public AuditStoreTest {};
INSTANTIATE_TEST_SUITE_P(Backend, SqliteAuditStoreTest, ::testing::Values(Backend::kSqlite), BackendName);

TEST_P(SqliteAuditStoreTest, FileIsPrivateAndNeverASymlink) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AppendEvent(Event("key_create", "root")).ok());
  for (const std::string& p : {path_, path_ + "-wal"}) {
    struct stat st;
    ASSERT_EQ(stat(p.c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << p;
  }
  store.reset();

  const std::string loose = (dir_ / "loose.db").string();
  { std::FILE* f = std::fopen(loose.c_str(), "w"); ASSERT_NE(f, nullptr); std::fclose(f); }
  ASSERT_EQ(chmod(loose.c_str(), 0644), 0);
  ASSERT_TRUE(SqliteAuditStore::Open(loose).ok());
  struct stat st;
  ASSERT_EQ(stat(loose.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "an existing file is tightened";

  const std::string link = (dir_ / "link.db").string();
  ASSERT_EQ(symlink(path_.c_str(), link.c_str()), 0);
  EXPECT_FALSE(SqliteAuditStore::Open(link).ok());
}

TEST_P(AuditStoreTest, IllFormedUtf8IsStoredSanitizedAndVerifies) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  EventRow ev = Event("tool_call", "alice");
  ev.target = std::string("bad\xff\xfe", 5);
  ASSERT_TRUE(store->AppendEvent(ev).ok());
  auto rows = store->Query({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].event()->target.substr(0, 3), "bad");
  EXPECT_NE((*rows)[0].event()->target, ev.target);
  auto report = store->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->problem->ToString();
}

// --- PostgreSQL: several gateways on one database (issue 22) ---------------------

class PgAuditStoreTest : public AuditStoreTest {
 protected:
  // A store as a gateway opens it: its own connections, the database's clock.
  std::unique_ptr<PgAuditStore> OpenGatewayStore() {
    auto db = state::PgDatabase::Connect(dsn_);
    if (!db.ok()) return nullptr;
    auto store = PgAuditStore::Open(*db);
    return store.ok() ? std::move(*store) : nullptr;
  }

  // One writer's appends: `rounds` rounds of a run with two calls (one
  // transaction), an event and a lone call; 5 rows a round. False if any failed.
  static bool Write(AuditStore& store, const std::string& writer, int rounds) {
    bool ok = true;
    for (int i = 0; i < rounds; ++i) {
      const std::string run_id = writer + "-r" + std::to_string(i);
      ok &= store.AppendRunWithCalls(Run(run_id, writer), {Call(run_id, 1, false), Call(run_id, 2, true)}).ok();
      ok &= store.AppendEvent(Event("tool_call", writer)).ok();
      ok &= store.AppendCall(Call(writer + "-lone", i, false)).ok();
    }
    return ok;
  }
};
INSTANTIATE_TEST_SUITE_P(Backend, PgAuditStoreTest, ::testing::Values(Backend::kPostgres), BackendName);

// The proof that the chain stays one valid chain under concurrent writers:
// writers in several processes (each its own connections, as separate
// gateways) and several threads of this one append at once; then every id
// from 1 to the total is there exactly once, every prev_hash links to the
// row before (Verify), each run's batch is contiguous, and the writers'
// rows really interleaved.
TEST_P(PgAuditStoreTest, WritersInSeveralProcessesAndThreadsKeepOneChain) {
  constexpr int kProcesses = 4, kThreads = 4, kRounds = 25, kRowsPerRound = 5;
  ASSERT_TRUE(OpenGatewayStore() != nullptr);  // migrated before the race
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::unique_ptr<PgAuditStore> store = OpenGatewayStore();
      const bool ok = store != nullptr && Write(*store, "proc" + std::to_string(p), kRounds);
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  std::atomic<int> thread_failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<PgAuditStore> store = OpenGatewayStore();
      if (store == nullptr || !Write(*store, "thread" + std::to_string(t), kRounds)) ++thread_failures;
    });
  }
  for (std::thread& th : threads) th.join();
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer process failed";
  }
  EXPECT_EQ(thread_failures.load(), 0);

  const int64_t total = (kProcesses + kThreads) * kRounds * kRowsPerRound;
  std::unique_ptr<PgAuditStore> store = OpenGatewayStore();
  ASSERT_TRUE(store);
  auto report = store->Verify();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << report->problem->ToString();
  EXPECT_EQ(report->rows_checked, total);
  EXPECT_EQ(report->last_id, total);

  auto rows = store->Query({.limit = 1000000});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), static_cast<size_t>(total));
  int switches = 0;
  std::string last_writer;
  for (size_t i = 0; i < rows->size(); ++i) {
    const AuditRow& r = (*rows)[i];
    EXPECT_EQ(r.id, static_cast<int64_t>(i + 1));
    if (i > 0) {
      EXPECT_GE(r.recorded_at, (*rows)[i - 1].recorded_at) << "one clock, in chain order";
    }
    std::string writer;
    if (const RunRecord* run = r.run()) {
      writer = run->user;
      // The run's two calls are the two rows right before it.
      ASSERT_GE(i, 2u);
      for (size_t k : {i - 2, i - 1}) {
        const CallRow* c = (*rows)[k].call();
        ASSERT_NE(c, nullptr) << "id " << r.id;
        EXPECT_EQ(c->run_id, run->run_id);
      }
    } else if (const EventRow* e = r.event()) {
      writer = e->actor;
    }
    if (!writer.empty() && !last_writer.empty() && writer != last_writer) ++switches;
    if (!writer.empty()) last_writer = writer;
  }
  EXPECT_GT(switches, kProcesses + kThreads) << "the writers ran one after another, not at once";
}

TEST_P(PgAuditStoreTest, RecordedAtIsTheDatabasesClock) {
  std::unique_ptr<PgAuditStore> store = OpenGatewayStore();
  ASSERT_TRUE(store);
  const int64_t before = NowMsForTest();
  ASSERT_TRUE(store->AppendEvent(Event("key_create", "root")).ok());
  const int64_t after = NowMsForTest();
  auto rows = store->Query({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_GE((*rows)[0].recorded_at, before - 5000);
  EXPECT_LE((*rows)[0].recorded_at, after + 5000);
}

TEST_P(PgAuditStoreTest, ReadingNeedsAnExistingLogAndChangesNothing) {
  auto db = state::PgDatabase::Connect(dsn_);
  ASSERT_TRUE(db.ok());
  auto missing = PgAuditStore::OpenExisting(*db);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no audit log"), std::string::npos) << missing.status().message();
  bool created = true;
  ASSERT_TRUE((*db)->Transact([&](pqxx::transaction_base& tx) {
                      created = tx.exec1("SELECT to_regclass('audit_head') IS NOT NULL")[0].as<bool>();
                      return OkStatus();
                    }).ok());
  EXPECT_FALSE(created);
  auto writer = OpenStore();
  ASSERT_TRUE(writer);
  AppendSample(*writer);
  auto reader = PgAuditStore::OpenExisting(*db);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto report = (*reader)->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->rows_checked, 7);
}

TEST_P(PgAuditStoreTest, NulBytesAreStoredAsReplacementCharacters) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  EventRow ev = Event("tool_call", "alice");
  ev.target = std::string("a\0b", 3);
  ASSERT_TRUE(store->AppendEvent(ev).ok());
  auto rows = store->Query({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].event()->target, "a\xEF\xBF\xBD" "b");
  auto report = store->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->problem->ToString();
  EXPECT_TRUE(store->Query({.user = std::string("a\0", 2)})->empty());
}

TEST_P(PgAuditStoreTest, AppendsGoOnAfterTheServerDroppedTheConnections) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AppendEvent(Event("key_create", "root")).ok());
  pqxx::connection admin(testing::PgTestServer::Get().SuperuserDsn());
  pqxx::nontransaction tx(admin);
  tx.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
          testing::PgTestServer::DatabaseOf(dsn_) + "' AND pid <> pg_backend_pid()");
  ASSERT_TRUE(store->AppendEvent(Event("key_revoke", "root")).ok());
  auto report = store->Verify();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->last_id, 2);
}

TEST(RedactArgs, SecretKeysAreHiddenAtAnyDepth) {
  json args = {
      {"query", "select 1"},
      {"Password", "hunter2"},
      {"headers", {{"Authorization", "xyz"}, {"X-Api-Key", "k"}, {"Accept", "json"}}},
      {"items", json::array({{{"name", "a"}, {"access_token", "t1"}},
                             {{"name", "b"}, {"client_secret", {{"nested", 1}}}}})},
      {"Cookie", json::array({"a=1"})},
      {"db", {{"PRIVATE_KEY", "-----BEGIN"}, {"credentials", nullptr}, {"passwd", 1}}},
      {"count", 3},
      {"flag", true},
  };
  json want = {
      {"query", "select 1"},
      {"Password", "[redacted]"},
      {"headers", {{"Authorization", "[redacted]"}, {"X-Api-Key", "[redacted]"}, {"Accept", "json"}}},
      {"items", json::array({{{"name", "a"}, {"access_token", "[redacted]"}},
                             {{"name", "b"}, {"client_secret", "[redacted]"}}})},
      {"Cookie", "[redacted]"},
      {"db", {{"PRIVATE_KEY", "[redacted]"}, {"credentials", "[redacted]"}, {"passwd", "[redacted]"}}},
      {"count", 3},
      {"flag", true},
  };
  EXPECT_EQ(RedactArgs(args), want);
  EXPECT_EQ(RedactArgs(json::array({"Bearer abc.def", "basic dXNlcg==", "Bearer"})),
            json::array({"[redacted]", "[redacted]", "Bearer"}));
  EXPECT_EQ(RedactArgs(42), json(42));
  EXPECT_EQ(RedactArgs(json::object()), json::object());
}

TEST(RedactArgs, LongStringsAreCut) {
  const std::string exact(256, 'a');
  EXPECT_EQ(RedactArgs({{"s", exact}}), (json{{"s", exact}}));
  const std::string long_s(300, 'b');
  EXPECT_EQ(RedactArgs(json::array({long_s})),
            json::array({std::string(256, 'b') + "\u2026[300 bytes]"}));
  // Never cut inside a UTF-8 sequence: 255 ASCII bytes, then a 2-byte é.
  const std::string utf8 = std::string(255, 'c') + "\xc3\xa9" + std::string(10, 'd');
  EXPECT_EQ(RedactArgs({{"s", utf8}})["s"], std::string(255, 'c') + "\u2026[267 bytes]");
}

TEST(RedactArgs, WholeValueIsCappedAtMaxBytes) {
  json big = json::array();
  for (int i = 0; i < 100; ++i) big.push_back(std::string(100, 'x'));
  json out = RedactArgs(big);
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(out["_truncated"], true);
  EXPECT_EQ(out["_bytes"], big.dump().size());
  EXPECT_EQ(RedactArgs(big, 1 << 20), big);
  EXPECT_EQ(RedactArgs({{"a", 1}}, 7), (json{{"a", 1}}));  // {"a":1} is 7 bytes
  EXPECT_EQ(RedactArgs({{"a", 1}}, 6)["_truncated"], true);
}

TEST(RedactArgs, DeepNestingIsCut) {
  json deep = "leaf";
  for (int i = 0; i < 100; ++i) deep = json::array({deep});
  json out = RedactArgs(deep, 1 << 20);
  const json* p = &out;
  int depth = 0;
  while (p->is_array()) {
    p = &(*p)[0];
    ++depth;
  }
  EXPECT_EQ(depth, kRedactMaxDepth + 1);
  EXPECT_EQ(*p, "[too deep]");
}

}  // namespace
}  // namespace airlock::audit
