// AuditLog: the fail-closed policy over an AuditStore. Disabled writes
// nothing; enabled writes run_start, calls and the run in order; a store that
// fails is an error when fail_closed, else a rate-limited warning; a store
// that cannot be opened refuses (fail_closed) or degrades.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "audit/audit_log.h"
#include "audit/sqlite_audit_store.h"

namespace airlock::audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Counts the appends it receives; fails all of them with Unavailable when `fail`.
class FakeStore : public AuditStore {
 public:
  explicit FakeStore(bool fail) : fail_(fail) {}
  Status AppendRun(const RunRecord&) override { return Record("run"); }
  Status AppendCall(const CallRow&) override { return Record("call"); }
  Status AppendEvent(const EventRow& e) override {
    last_event_ = e;
    return Record("event");
  }
  StatusOr<std::vector<AuditRow>> Query(const AuditQuery&) override { return Unavailable("fake"); }
  StatusOr<VerifyReport> Verify() override { return Unavailable("fake"); }

  std::vector<std::string>& appends() { return appends_; }
  const EventRow& last_event() const { return last_event_; }

 private:
  Status Record(const std::string& what) {
    appends_.push_back(what);
    return fail_ ? Unavailable("disk on fire") : OkStatus();
  }
  const bool fail_;
  std::vector<std::string> appends_;
  EventRow last_event_;
};

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("airlock-auditlog-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  config::Config Config(bool enabled, bool fail_closed) {
    config::Config c = config::DefaultConfig();
    c.server.state_dir = (dir_ / "state" / "nested").string();
    c.audit.enabled = enabled;
    c.audit.fail_closed = fail_closed;
    return c;
  }

  static RunRecord Run(const std::string& id) {
    RunRecord r;
    r.run_id = id;
    r.user = "alice";
    r.status = "SUCCESS";
    r.calls_total = 2;
    return r;
  }
  static EventRow Ev(const std::string& kind, const std::string& actor = "", const std::string& target = "",
                     int64_t at = 0) {
    EventRow e;
    e.at = at;
    e.kind = kind;
    e.actor = actor;
    e.target = target;
    return e;
  }
  static CallRow Call(const std::string& run_id, int64_t seq) {
    CallRow c;
    c.run_id = run_id;
    c.seq = seq;
    c.connector = "crm";
    c.tool = "get";
    c.decision = "allowed";
    return c;
  }

  fs::path dir_;
};

TEST_F(AuditLogTest, DisabledWritesNothingAndCreatesNothing) {
  config::Config c = Config(/*enabled=*/false, /*fail_closed=*/true);
  StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(c);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_FALSE((*log)->enabled());
  EXPECT_FALSE((*log)->degraded());
  EXPECT_EQ((*log)->store(), nullptr);
  EXPECT_TRUE((*log)->BeginRun("r_1", "alice", json::object()).ok());
  EXPECT_TRUE((*log)->EndRun(Run("r_1"), {Call("r_1", 1)}).ok());
  EXPECT_TRUE((*log)->Event(Ev("approve", "alice")).ok());
  EXPECT_FALSE(fs::exists(dir_ / "state"));
}

TEST_F(AuditLogTest, EnabledCreatesAPrivateDirectoryAndWritesInOrder) {
  config::Config c = Config(true, true);
  StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(c);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_TRUE((*log)->enabled());
  EXPECT_TRUE((*log)->fail_closed());
  EXPECT_EQ(c.AuditDbPath(), (dir_ / "state" / "nested" / "audit.db").string());
  for (const fs::path& d : {dir_ / "state", dir_ / "state" / "nested"}) {
    struct stat st;
    ASSERT_EQ(stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 0777, 0700) << d;
  }
  EXPECT_TRUE(fs::is_regular_file(c.AuditDbPath()));

  const int64_t before = NowMs();
  ASSERT_TRUE((*log)->BeginRun("r_1", "alice", {{"kind", "inline"}}).ok());
  ASSERT_TRUE((*log)->EndRun(Run("r_1"), {Call("r_1", 1), Call("r_1", 2)}).ok());
  ASSERT_TRUE((*log)->Event(Ev("approve", "bob", "ct_1")).ok());
  ASSERT_TRUE((*log)->Event(Ev("config", "root", "", 42)).ok());

  StatusOr<std::vector<AuditRow>> rows = (*log)->store()->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 6u);
  const EventRow* start = (*rows)[0].event();
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->kind, "run_start");
  EXPECT_EQ(start->actor, "alice");
  EXPECT_EQ(start->target, "r_1");
  EXPECT_EQ(start->detail, json({{"kind", "inline"}}));
  EXPECT_GE(start->at, before);
  ASSERT_NE((*rows)[1].call(), nullptr);
  EXPECT_EQ((*rows)[1].call()->seq, 1);
  ASSERT_NE((*rows)[2].call(), nullptr);
  EXPECT_EQ((*rows)[2].call()->seq, 2);
  ASSERT_NE((*rows)[3].run(), nullptr);
  EXPECT_EQ((*rows)[3].run()->run_id, "r_1");
  ASSERT_NE((*rows)[4].event(), nullptr);
  EXPECT_GE((*rows)[4].event()->at, before) << "`at` 0 is stamped with the current time";
  EXPECT_LE((*rows)[4].event()->at, NowMs());
  ASSERT_NE((*rows)[5].event(), nullptr);
  EXPECT_EQ((*rows)[5].event()->at, 42) << "an explicit `at` is kept";

  StatusOr<VerifyReport> report = (*log)->store()->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->rows_checked, 6);
}

TEST_F(AuditLogTest, FailClosedReturnsTheStoreErrorAndStopsAtTheFirst) {
  auto fake = std::make_unique<FakeStore>(/*fail=*/true);
  FakeStore* store = fake.get();
  AuditLog log(std::move(fake), /*fail_closed=*/true);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(log.BeginRun("r_1", "alice", json::object()).code(), StatusCode::kUnavailable);
  Status st = log.EndRun(Run("r_1"), {Call("r_1", 1), Call("r_1", 2)});
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("disk on fire"), std::string::npos);
  EXPECT_EQ(log.Event(Ev("approve")).code(), StatusCode::kUnavailable);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "the caller reports a fail-closed error";
  EXPECT_EQ(store->appends(), (std::vector<std::string>{"event", "call", "event"}))
      << "EndRun stops at the first failed row";
}

TEST_F(AuditLogTest, WithoutFailClosedErrorsAreWarnedAtMostOncePerMinute) {
  auto fake = std::make_unique<FakeStore>(/*fail=*/true);
  FakeStore* store = fake.get();
  AuditLog log(std::move(fake), /*fail_closed=*/false);
  EXPECT_TRUE(log.enabled());
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(log.BeginRun("r_1", "alice", json::object()).ok());
  EXPECT_TRUE(log.EndRun(Run("r_1"), {Call("r_1", 1)}).ok());
  EXPECT_TRUE(log.Event(Ev("approve")).ok());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("disk on fire"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one warning for three failures:\n" << err;
  EXPECT_EQ(store->appends().size(), 3u) << "each call still tried its write";
}

TEST_F(AuditLogTest, AWorkingStoreIsSilentEitherWay) {
  for (bool fail_closed : {true, false}) {
    auto fake = std::make_unique<FakeStore>(/*fail=*/false);
    FakeStore* store = fake.get();
    AuditLog log(std::move(fake), fail_closed);
    ::testing::internal::CaptureStderr();
    EXPECT_TRUE(log.Event(Ev("key_create", "root", "k_1")).ok());
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(store->last_event().target, "k_1");
    EXPECT_GT(store->last_event().at, 0);
  }
}

TEST_F(AuditLogTest, AnUnopenableStoreRefusesWhenFailClosedAndDegradesOtherwise) {
  // The database path is a directory; then its parent is a regular file.
  fs::create_directories(dir_ / "db-is-a-dir.db");
  std::ofstream(dir_ / "plain-file") << "x";
  for (const fs::path& bad : {dir_ / "db-is-a-dir.db", dir_ / "plain-file" / "sub" / "audit.db"}) {
    config::Config c = Config(true, true);
    c.audit.path = bad.string();
    StatusOr<std::unique_ptr<AuditLog>> closed = AuditLog::Open(c);
    ASSERT_FALSE(closed.ok()) << bad;
    EXPECT_NE(closed.status().message().find(bad.string()), std::string::npos) << closed.status().message();

    c.audit.fail_closed = false;
    ::testing::internal::CaptureStderr();
    StatusOr<std::unique_ptr<AuditLog>> open = AuditLog::Open(c);
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(open.ok()) << open.status().ToString();
    EXPECT_FALSE((*open)->enabled());
    EXPECT_TRUE((*open)->degraded());
    EXPECT_NE(err.find("WITHOUT an audit log"), std::string::npos) << err;
    EXPECT_TRUE((*open)->BeginRun("r_1", "alice", json::object()).ok());
    EXPECT_TRUE((*open)->EndRun(Run("r_1"), {}).ok());
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "db-is-a-dir.db"));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "plain-file"));
}

TEST_F(AuditLogTest, AnUnwritableDirectoryRefusesWhenFailClosed) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into a mode 0500 directory";
  fs::create_directories(dir_ / "ro");
  fs::permissions(dir_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  config::Config c = Config(true, true);
  c.server.state_dir = (dir_ / "ro" / "state").string();
  EXPECT_FALSE(AuditLog::Open(c).ok());
  c.server.state_dir = (dir_ / "ro").string();
  EXPECT_FALSE(AuditLog::Open(c).ok());
  fs::permissions(dir_ / "ro", fs::perms::owner_all);
}

// audit.sync picks SQLite's durability; both settings keep every record.
TEST_F(AuditLogTest, BothSyncSettingsKeepEveryRecord) {
  for (const char* sync : {"full", "normal"}) {
    config::Config c = Config(true, true);
    c.audit.sync = sync;
    c.audit.path = (dir_ / (std::string(sync) + ".db")).string();
    {
      StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(c);
      ASSERT_TRUE(log.ok()) << log.status().ToString();
      ASSERT_TRUE((*log)->BeginRun("r_1", "alice", {{"kind", "inline"}}).ok());
      ASSERT_TRUE((*log)->EndRun(Run("r_1"), {Call("r_1", 1)}).ok());
    }
    StatusOr<std::unique_ptr<SqliteAuditStore>> store = SqliteAuditStore::Open(c.audit.path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    StatusOr<std::vector<AuditRow>> rows = (*store)->Query({});
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(rows->size(), 3u) << sync << ": the run's start, its end and its call";
    StatusOr<VerifyReport> verified = (*store)->Verify();
    ASSERT_TRUE(verified.ok());
    EXPECT_TRUE(verified->ok()) << sync;
  }
}

TEST_F(AuditLogTest, RunIdsAreRandomHex) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewRunId();
    ASSERT_EQ(id.size(), 18u) << id;
    EXPECT_EQ(id.substr(0, 2), "r_");
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 2), std::string::npos) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 100u);
}

TEST_F(AuditLogTest, NowMsIsTheSystemClockInMilliseconds) {
  const int64_t t = NowMs();
  const int64_t s = static_cast<int64_t>(time(nullptr));
  EXPECT_LE(std::llabs(t / 1000 - s), 2);
}

}  // namespace
}  // namespace airlock::audit
