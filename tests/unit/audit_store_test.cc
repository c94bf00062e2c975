// The audit log (issue 5): rows round-trip and filter, the hash chain
// catches an edited or deleted row made behind the store's back (raw
// sqlite3 on the file), concurrent appends keep one valid chain, the file is
// private, and call arguments are redacted by the documented rule.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "audit/audit_store.h"
#include "audit/redaction.h"
#include "audit/sqlite_audit_store.h"

namespace airlock::audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class AuditStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("airlock-audit-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "audit.db").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<SqliteAuditStore> OpenStore() {
    SqliteAuditStore::Options opts;
    opts.now_ms = [this] { return clock_.load(); };
    auto store = SqliteAuditStore::Open(path_, opts);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Runs constant SQL on the file through a separate, raw connection: what
  // someone with write access to the file could do.
  void Tamper(const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    EXPECT_EQ(sqlite3_changes(db), 1) << sql;
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
  std::string path_;
  std::atomic<int64_t> clock_{1};
};

TEST_F(AuditStoreTest, RowsRoundTripInChainOrder) {
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

TEST_F(AuditStoreTest, QueryFilters) {
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

TEST_F(AuditStoreTest, VerifyAcceptsAnUntouchedStore) {
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

TEST_F(AuditStoreTest, ARunWithItsCallsIsOneAtomicWrite) {
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
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, "CREATE TRIGGER no_runs BEFORE INSERT ON audit_runs BEGIN SELECT RAISE(ABORT, 'refused'); END",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_FALSE(store->AppendRunWithCalls(Run("r_10", "dana"), {Call("r_10", 1, false)}).ok());
  auto after = store->Query({.run_id = "r_10"});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty()) << "the call row was rolled back with the run row";
}

TEST_F(AuditStoreTest, ReopenedStoreContinuesTheChain) {
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

TEST_F(AuditStoreTest, VerifyReportsAnEditedRow) {
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

TEST_F(AuditStoreTest, VerifyReportsAnEditedIntegerAndJsonField) {
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

TEST_F(AuditStoreTest, VerifyReportsADeletedMiddleRow) {
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

TEST_F(AuditStoreTest, VerifyReportsADeletedRowWhoseGapWasClosed) {
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

TEST_F(AuditStoreTest, VerifyReportsADeletedLastRow) {
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

TEST_F(AuditStoreTest, ConcurrentAppendsKeepOneValidChain) {
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

TEST_F(AuditStoreTest, TwoStoresOnOneFileShareTheChain) {
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

TEST_F(AuditStoreTest, FileIsPrivateAndNeverASymlink) {
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

TEST_F(AuditStoreTest, IllFormedUtf8IsStoredSanitizedAndVerifies) {
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
