// `airlock audit` and the audit events of `airlock keys`, driving the built
// binary against a temporary state dir: key events are recorded without the
// secret, verify catches a modified or deleted row (raw SQL on the file),
// the filters select what they say, a missing log is an error that creates
// nothing, and fail_closed refuses a key change the log cannot record.
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "audit/sqlite_audit_store.h"
#include "auth/key_store.h"
#include "cli_run_util.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
const std::string kAirlock = std::string(AIRLOCK_BINARY_DIR) + "/airlock";

struct Result {
  int rc = -1;
  std::string out, err;
};

class CliAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("airlock-cli-audit-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    state_ = (dir_ / "state").string();
    db_ = state_ + "/audit.db";
    keys_ = (dir_ / "keys.json").string();
    WriteConfig({{"server", {{"state_dir", state_}}}});
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // `config`, with the role the keys below are made for (`keys create`
  // refuses a role the config does not define).
  void WriteConfig(json config) {
    config["roles"]["viewer"] = json::object();
    std::ofstream(dir_ / "airlock.json", std::ios::trunc) << config.dump();
  }
  std::string ConfigFlag() const { return " --config " + (dir_ / "airlock.json").string(); }

  // Runs `airlock <args>`.
  Result Airlock(const std::string& args) {
    const std::string err_file = (dir_ / "stderr").string();
    FILE* p = popen((kAirlock + " " + args + " 2>" + err_file).c_str(), "r");
    Result r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::stringstream err;
    err << std::ifstream(err_file).rdbuf();
    r.err = err.str();
    return r;
  }

  // `airlock keys create`: the key's id and secret.
  std::pair<std::string, std::string> CreateKey(const std::string& actor, const std::string& user) {
    Result r = Airlock("keys create --json --file " + keys_ + ConfigFlag() + " --as " + actor + " --user " + user +
                       " --role viewer --name laptop");
    EXPECT_EQ(r.rc, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    if (!j.is_object()) return {};
    return {j.value("id", ""), j.value("secret", "")};
  }

  json AuditJson(const std::string& args) {
    Result r = Airlock("audit --json" + ConfigFlag() + " " + args);
    EXPECT_EQ(r.rc, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_array()) << r.out;
    return j;
  }

  // Runs constant SQL on the log through a raw connection, as someone with
  // write access to the file could.
  void Tamper(const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    EXPECT_EQ(sqlite3_changes(db), 1) << sql;
    sqlite3_free(err);
    sqlite3_close(db);
  }

  fs::path dir_;
  std::string state_, db_, keys_;
};

TEST_F(CliAuditTest, KeyCreateAndRevokeAreRecordedWithoutTheSecret) {
  auto [id, secret] = CreateKey("alice", "erin");
  ASSERT_FALSE(secret.empty());
  Result revoke = Airlock("keys revoke " + id + " --file " + keys_ + ConfigFlag() + " --as bob");
  ASSERT_EQ(revoke.rc, 0) << revoke.err;

  struct stat st;
  ASSERT_EQ(stat(state_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
  ASSERT_EQ(stat(db_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);

  Result raw = Airlock("audit --json" + ConfigFlag());
  ASSERT_EQ(raw.rc, 0) << raw.err;
  EXPECT_EQ(raw.out.find(secret), std::string::npos) << "the secret is never recorded";
  EXPECT_EQ(raw.out.find(secret.substr(4)), std::string::npos);
  json rows = json::parse(raw.out);
  ASSERT_EQ(rows.size(), 2u) << rows.dump(2);
  const json detail = {{"user", "erin"}, {"role", "viewer"}, {"name", "laptop"}, {"via", "cli"}};
  EXPECT_EQ(rows[0]["type"], "event");
  EXPECT_EQ(rows[0]["kind"], "key_create");
  EXPECT_EQ(rows[0]["actor"], "alice");
  EXPECT_EQ(rows[0]["target"], id);
  EXPECT_EQ(rows[0]["detail"], detail);
  EXPECT_GT(rows[0]["at"].get<int64_t>(), 0);
  EXPECT_EQ(rows[1]["kind"], "key_revoke");
  EXPECT_EQ(rows[1]["actor"], "bob");
  EXPECT_EQ(rows[1]["target"], id);
  EXPECT_EQ(rows[1]["detail"], detail) << "revoke records whose key it was";
  EXPECT_LT(rows[0]["id"].get<int64_t>(), rows[1]["id"].get<int64_t>());

  Result human = Airlock("audit --state-dir " + state_);  // the override finds the same log
  ASSERT_EQ(human.rc, 0) << human.err;
  EXPECT_NE(human.out.find("event key_create actor=alice target=" + id), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("key_revoke actor=bob target=" + id + " name=laptop role=viewer user=erin"),
            std::string::npos)
      << human.out;
  EXPECT_EQ(std::count(human.out.begin(), human.out.end(), '\n'), 2) << human.out;

  Result verify = Airlock("audit verify" + ConfigFlag());
  EXPECT_EQ(verify.rc, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.out.rfind("ok: 2 rows, head ", 0), 0u) << verify.out;
  Result verify_json = Airlock("audit verify --json --db " + db_);
  EXPECT_EQ(verify_json.rc, 0);
  EXPECT_EQ(json::parse(verify_json.out)["ok"], true) << verify_json.out;
}

TEST_F(CliAuditTest, KeysWithoutAsRecordTheOsUser) {
  Result r = Airlock("keys create --file " + keys_ + ConfigFlag() + " --user erin --role viewer");
  ASSERT_EQ(r.rc, 0) << r.err;
  json rows = AuditJson("");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0]["actor"].get<std::string>().empty());
  EXPECT_NE(rows[0]["actor"], "alice");
}

TEST_F(CliAuditTest, VerifyNamesAModifiedRow) {
  auto [id1, s1] = CreateKey("alice", "erin");
  auto [id2, s2] = CreateKey("alice", "frank");
  ASSERT_EQ(Airlock("keys revoke " + id1 + " --file " + keys_ + ConfigFlag() + " --as bob").rc, 0);
  ASSERT_EQ(Airlock("audit verify" + ConfigFlag()).rc, 0);

  Tamper("UPDATE audit_events SET actor = 'mallory' WHERE id = 2");
  Result verify = Airlock("audit verify" + ConfigFlag());
  EXPECT_EQ(verify.rc, 4) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("modified: events id 2"), std::string::npos) << verify.out;
  Result as_json = Airlock("audit verify --json" + ConfigFlag());
  EXPECT_EQ(as_json.rc, 4);
  json j = json::parse(as_json.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["problem"]["kind"], "modified");
  EXPECT_EQ(j["problem"]["table"], "events");
  EXPECT_EQ(j["problem"]["id"], 2);
}

TEST_F(CliAuditTest, VerifyNamesADeletedRow) {
  auto [id1, s1] = CreateKey("alice", "erin");
  auto [id2, s2] = CreateKey("alice", "frank");
  ASSERT_EQ(Airlock("keys revoke " + id2 + " --file " + keys_ + ConfigFlag() + " --as bob").rc, 0);
  Tamper("DELETE FROM audit_events WHERE id = 2");
  Result verify = Airlock("audit verify" + ConfigFlag());
  EXPECT_EQ(verify.rc, 4) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("deleted"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("id 2"), std::string::npos) << verify.out;
}

TEST_F(CliAuditTest, FiltersSelectBySinceUserAndRun) {
  {
    int64_t clock = 1000;  // 1970: "old" rows
    fs::create_directories(state_);
    audit::SqliteAuditStore::Options opts;
    opts.now_ms = [&clock] { return clock; };
    auto store = audit::SqliteAuditStore::Open(db_, opts);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto run = [&](const std::string& id, const std::string& user) {
      for (int64_t seq : {1, 2}) {
        audit::CallRow c;
        c.run_id = id;
        c.seq = seq;
        c.connector = "crm";
        c.tool = "get";
        c.decision = seq == 1 ? "allowed" : "denied";
        c.reason = seq == 1 ? "" : "write tool not allowed";
        c.result_status = "ok";
        ASSERT_TRUE((*store)->AppendCall(c).ok());
      }
      audit::RunRecord r;
      r.run_id = id;
      r.duration_ms = 250;
      r.user = user;
      r.role = "analyst";
      r.endpoint = "main";
      r.kind = "inline";
      r.language = "javascript";
      r.code = "return 1 // " + id;
      r.status = "SUCCESS";
      r.calls_total = 2;
      r.calls_denied = 1;
      ASSERT_TRUE((*store)->AppendRun(r).ok());
    };
    run("r_old", "alice");                                       // ids 1-3
    clock = audit::NowMs();
    run("r_1", "alice");                                         // ids 4-6
    run("r_2", "bob");                                           // ids 7-9
    audit::EventRow approve;
    approve.at = clock;
    approve.kind = "approve";
    approve.actor = "alice";
    approve.target = "ct_1";
    approve.detail = {{"decision", "approved"}, {"note", "looks fine"}};
    ASSERT_TRUE((*store)->AppendEvent(approve).ok());  // id 10
  }
  auto ids = [](const json& rows) {
    std::vector<int64_t> out;
    for (const json& r : rows) out.push_back(r["id"].get<int64_t>());
    return out;
  };
  using Ids = std::vector<int64_t>;

  json r1 = AuditJson("--run r_1");
  EXPECT_EQ(ids(r1), (Ids{4, 5, 6}));
  ASSERT_EQ(r1.size(), 3u);
  EXPECT_EQ(r1[2]["type"], "run");
  EXPECT_EQ(r1[2]["code"], "return 1 // r_1") << "runs include their code";
  EXPECT_EQ(r1[1]["reason"], "write tool not allowed");

  EXPECT_EQ(ids(AuditJson("--user alice")), (Ids{1, 2, 3, 4, 5, 6, 10}));
  EXPECT_EQ(ids(AuditJson("--user bob")), (Ids{7, 8, 9}));
  EXPECT_EQ(ids(AuditJson("--user alice --run r_2")), Ids{});
  EXPECT_EQ(ids(AuditJson("--since 2000-01-01")), (Ids{4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(ids(AuditJson("--since 2000-01-01T00:00:00Z")), (Ids{4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(ids(AuditJson("--since 1970-01-01T00:00:01.001Z")), (Ids{4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(ids(AuditJson("--since 1970-01-01T00:00:01Z")).size(), 10u);
  EXPECT_EQ(ids(AuditJson("--since 1001")), (Ids{4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(ids(AuditJson("--since 1000")).size(), 10u);
  EXPECT_EQ(ids(AuditJson("--since 15m")), (Ids{4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(ids(AuditJson("--since 7d --user bob")), (Ids{7, 8, 9}));
  EXPECT_EQ(ids(AuditJson("--since 2999-01-01T10:00Z")), Ids{});
  EXPECT_EQ(ids(AuditJson("--limit 2")), (Ids{9, 10}));

  Result human = Airlock("audit --run r_2" + ConfigFlag());
  ASSERT_EQ(human.rc, 0) << human.err;
  std::vector<std::string> lines;
  std::istringstream in(human.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << human.out;
  EXPECT_NE(lines[0].find(" call  r_2 #1 crm.get decision=allowed result=ok"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("decision=denied reason=\"write tool not allowed\""), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" run   r_2 user=bob role=analyst endpoint=main kind=inline lang=javascript "
                          "status=SUCCESS duration=250ms calls=2 denied=1"),
            std::string::npos)
      << lines[2];
  EXPECT_EQ(lines[2].rfind("20", 0), 0u) << "starts with an ISO time: " << lines[2];
  EXPECT_EQ(lines[2][10], 'T');
  Result event = Airlock("audit --user alice --limit 1" + ConfigFlag());
  EXPECT_NE(event.out.find("event approve actor=alice target=ct_1 decision=approved note=\"looks fine\""),
            std::string::npos)
      << event.out;

  for (const char* bad : {"--since yesterday", "--since 2026-02-30", "--since 2026-12-02T10:00:00",
                          "--since 2026-12-02T25:00Z", "--since 5w", "--limit 0"}) {
    Result r = Airlock(std::string("audit ") + bad + ConfigFlag());
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.out << r.err;
  }
  Result filtered_verify = Airlock("audit verify --user alice" + ConfigFlag());
  EXPECT_EQ(filtered_verify.rc, 2) << filtered_verify.err;
  EXPECT_EQ(Airlock("audit verify" + ConfigFlag()).rc, 0);

  // Enumerated filters match whatever their case; an unknown status is an
  // error naming the valid ones, not an empty answer.
  EXPECT_EQ(ids(AuditJson("--status SUCCESS --type run")), (Ids{3, 6, 9}));
  EXPECT_EQ(ids(AuditJson("--status success --type RUN")), (Ids{3, 6, 9}));
  EXPECT_EQ(ids(AuditJson("--status Success --type Call --user bob")), (Ids{7, 8}));
  Result unknown = Airlock("audit --status succeeded" + ConfigFlag());
  EXPECT_EQ(unknown.rc, 2) << unknown.out;
  EXPECT_NE(unknown.err.find("SUCCESS, ERROR, TIMEOUT, LIMIT, DENIED, CANCELLED"), std::string::npos) << unknown.err;
  EXPECT_EQ(Airlock("audit --type runs" + ConfigFlag()).rc, 2);
}

// Text output escapes what agents and callers wrote (a run's user, an
// event's detail): no raw ESC, C1 control or bidi override reaches the
// terminal. --json is JSON-escaped already.
TEST_F(CliAuditTest, TextOutputEscapesControlSequences) {
  const std::string evil = "x\x1b[2K\xe2\x80\xae\xc2\x9b\x9by";
  {
    fs::create_directories(state_);
    auto store = audit::SqliteAuditStore::Open(db_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    audit::RunRecord r;
    r.run_id = "r_1";
    r.user = evil;
    r.status = "ERROR";
    r.error_code = evil;
    ASSERT_TRUE((*store)->AppendRun(r).ok());
    audit::EventRow e;
    e.kind = "code_tool_propose";
    e.actor = evil;
    e.detail = {{"name", evil}};
    ASSERT_TRUE((*store)->AppendEvent(e).ok());
  }
  Result text = Airlock("audit" + ConfigFlag());
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\x9b'), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("\xe2\x80\xae"), std::string::npos) << text.out;
  // (The log stores invalid UTF-8 as U+FFFD already.)
  EXPECT_NE(text.out.find("user=\"x\\x1b[2K\\u202e\\u009b"), std::string::npos) << text.out;
}

// `keys create` refuses a role the config does not define, naming those it does.
TEST_F(CliAuditTest, KeysCreateRefusesAnUnknownRole) {
  Result r = Airlock("keys create --file " + keys_ + ConfigFlag() + " --user erin --role nosuchrole");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--role nosuchrole: no such role"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("admin, reader, viewer"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "no secret printed: " << r.out;
  EXPECT_FALSE(fs::exists(keys_)) << "no key stored";
}

// A key the configuration never checks is stored with a loud warning.
TEST_F(CliAuditTest, KeysCreateWarnsWhenTheConfigDoesNotCheckKeys) {
  Result unchecked = Airlock("keys create --file " + keys_ + ConfigFlag() + " --user erin --role viewer");
  ASSERT_EQ(unchecked.rc, 0) << unchecked.err;
  EXPECT_NE(unchecked.err.find("WARNING: this configuration does not check API keys"), std::string::npos)
      << unchecked.err;
  WriteConfig({{"server", {{"state_dir", state_}, {"http", {{"keys_file", keys_}}}}}});
  Result checked = Airlock("keys create --file " + keys_ + ConfigFlag() + " --user erin --role viewer");
  ASSERT_EQ(checked.rc, 0) << checked.err;
  EXPECT_EQ(checked.err.find("WARNING"), std::string::npos) << checked.err;
  Result elsewhere =
      Airlock("keys create --file " + (dir_ / "other.json").string() + ConfigFlag() + " --user erin --role viewer");
  ASSERT_EQ(elsewhere.rc, 0) << elsewhere.err;
  EXPECT_NE(elsewhere.err.find("is not the key file this configuration's server checks"), std::string::npos)
      << elsewhere.err;
}

TEST_F(CliAuditTest, AMissingLogIsAnErrorAndIsNotCreated) {
  const fs::path missing = dir_ / "nowhere" / "audit.db";
  for (const std::string& args : {"audit --db " + missing.string(), "audit verify --db " + missing.string(),
                                  "audit --json" + ConfigFlag(), "audit verify" + ConfigFlag()}) {
    Result r = Airlock(args);
    EXPECT_EQ(r.rc, 1) << args;
    EXPECT_NE(r.err.find("no audit log at "), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
  EXPECT_FALSE(fs::exists(state_));
  Result bad_config = Airlock("audit --config " + (dir_ / "no-config.json").string());
  EXPECT_EQ(bad_config.rc, 2) << bad_config.err;
}

// An auditor with read access only (here: uid 65534, the file 0644 in a
// directory it cannot write) reads and verifies the log, and the log file
// is left as it was.
TEST_F(CliAuditTest, ReadingAndVerifyingNeedNoWriteAccess) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to another uid";
  CreateKey("alice", "bob");
  ASSERT_TRUE(fs::exists(db_));
  ASSERT_EQ(chmod(state_.c_str(), 0755), 0);
  ASSERT_EQ(chmod(db_.c_str(), 0644), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  const auto before = fs::last_write_time(db_);
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  for (const std::string& args : {"audit verify --db " + db_, "audit --json --db " + db_}) {
    Result r = Airlock(args);  // as root, for comparison
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string err_file = (dir_ / "stderr-nobody").string();
    std::string cmd = as_nobody + kAirlock + " " + args + " 2>" + err_file;
    airlock::testing::CliOutcome o = airlock::testing::RunCommandLine(cmd);
    std::stringstream err;
    err << std::ifstream(err_file).rdbuf();
    EXPECT_EQ(o.rc, 0) << args << ": " << err.str();
    EXPECT_EQ(o.out, r.out) << args;
  }
  EXPECT_EQ(fs::last_write_time(db_), before);
}

// Usage errors exit 2 (not CLI11's own codes); --help exits 0.
TEST_F(CliAuditTest, UsageErrorsExitTwo) {
  for (const std::string& args : {"run --no-such-flag", "no-such-command", "audit --limit x", "serve --http"}) {
    Result r = Airlock(args);
    EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  EXPECT_EQ(Airlock("--help").rc, 0);
  EXPECT_EQ(Airlock("audit --help").rc, 0);
}

TEST_F(CliAuditTest, FailClosedRefusesAKeyChangeTheLogCannotRecord) {
  fs::create_directories(dir_ / "a-directory");
  WriteConfig({{"server", {{"state_dir", state_}}}, {"audit", {{"path", (dir_ / "a-directory").string()}}}});
  Result refused = Airlock("keys create --file " + keys_ + ConfigFlag() + " --user erin --role viewer");
  EXPECT_EQ(refused.rc, 1) << refused.err;
  EXPECT_NE(refused.err.find("refusing"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out, "") << "no secret";
  EXPECT_FALSE(fs::exists(keys_)) << "the key store was not touched";

  // An existing key cannot be revoked either while the log is unwritable.
  WriteConfig({{"server", {{"state_dir", state_}}}});
  auto [id, secret] = CreateKey("alice", "erin");
  WriteConfig({{"server", {{"state_dir", state_}}}, {"audit", {{"path", (dir_ / "a-directory").string()}}}});
  EXPECT_EQ(Airlock("keys revoke " + id + " --file " + keys_ + ConfigFlag()).rc, 1);
  auto store = auth::KeyStore::Open(keys_);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->Authenticate(secret).has_value()) << "still active: the refusal came first";

  // Without fail_closed the change goes ahead, with a warning.
  WriteConfig({{"server", {{"state_dir", state_}}},
               {"audit", {{"path", (dir_ / "a-directory").string()}, {"fail_closed", false}}}});
  Result degraded = Airlock("keys revoke " + id + " --file " + keys_ + ConfigFlag());
  EXPECT_EQ(degraded.rc, 0) << degraded.err;
  EXPECT_NE(degraded.err.find("WITHOUT an audit log"), std::string::npos) << degraded.err;
  EXPECT_FALSE((*store)->Authenticate(secret).has_value());

  // A disabled log records nothing and refuses nothing.
  WriteConfig({{"server", {{"state_dir", (dir_ / "unused").string()}}}, {"audit", {{"enabled", false}}}});
  Result disabled = Airlock("keys create --file " + keys_ + ConfigFlag() + " --user erin --role viewer");
  EXPECT_EQ(disabled.rc, 0) << disabled.err;
  EXPECT_FALSE(fs::exists(dir_ / "unused"));
}

TEST_F(CliAuditTest, AWriteThatFailsAfterOpeningLeavesNoUnrecordedKey) {
  // The log opens, but every event insert fails (a trigger planted in the file).
  auto [id, secret] = CreateKey("alice", "erin");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TRIGGER no_events BEFORE INSERT ON audit_events "
                         "BEGIN SELECT RAISE(ABORT, 'audit disk full'); END",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  Result create = Airlock("keys create --json --file " + keys_ + ConfigFlag() + " --user frank --role viewer");
  EXPECT_EQ(create.rc, 1) << create.err;
  EXPECT_EQ(create.out, "") << "the secret of an unrecorded key is never shown";
  EXPECT_NE(create.err.find("audit disk full"), std::string::npos) << create.err;
  EXPECT_NE(create.err.find("revoked at once"), std::string::npos) << create.err;
  auto store = auth::KeyStore::Open(keys_);
  ASSERT_TRUE(store.ok());
  auto keys = (*store)->List();
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[1].user, "frank");
  EXPECT_NE((*keys)[1].revoked_at, 0) << "the unrecorded key is revoked";

  Result revoke = Airlock("keys revoke " + id + " --file " + keys_ + ConfigFlag());
  EXPECT_EQ(revoke.rc, 1) << "the revocation could not be recorded: " << revoke.err;
  EXPECT_FALSE((*store)->Authenticate(secret).has_value()) << "but it stands";

  // Without fail_closed: a warning, and the change goes ahead.
  WriteConfig({{"server", {{"state_dir", state_}}}, {"audit", {{"fail_closed", false}}}});
  Result degraded = Airlock("keys create --file " + keys_ + ConfigFlag() + " --user gina --role viewer");
  EXPECT_EQ(degraded.rc, 0) << degraded.err;
  EXPECT_NE(degraded.err.find("audit disk full"), std::string::npos) << degraded.err;
  EXPECT_NE(degraded.out.find("alk_"), std::string::npos);
  EXPECT_EQ(Airlock("audit verify" + ConfigFlag()).rc, 0) << "failed writes left the chain intact";
}

}  // namespace
}  // namespace airlock
