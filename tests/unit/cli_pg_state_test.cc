// The CLI and the server with state.backend "postgres" (issue 22), driving
// the built binary against a real PostgreSQL 15 (pg_test_server.h):
// `airlock audit verify --config` reports ok after runs and key changes and
// names an edited or deleted row; several `airlock keys create` processes
// at once leave one valid chain; `airlock tools approve` works on the
// database; config errors and an unreachable database are refused; and two
// `airlock serve` gateways on one database refuse a key revoked through the
// CLI on their next request.
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "codetools/pg_code_tool_store.h"
#include "pg_test_server.h"
#include "db/pg_database.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
const std::string kAirlock = std::string(AIRLOCK_BINARY_DIR) + "/airlock";

struct Result {
  int rc = -1;
  std::string out, err;
};

class PgCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dsn_ = testing::PgTestServer::Get().NewDatabase();
    ASSERT_FALSE(dsn_.empty()) << testing::PgTestServer::Get().error();
    dir_ = fs::temp_directory_path() / ("airlock-cli-pg-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The DSN from a file, as a mounted Secret gives it: surrounding
    // whitespace is not part of it.
    std::ofstream(dir_ / "dsn") << "  " << dsn_ << "\n\n";
    WriteConfig({});
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // airlock.json: a postgres state plus `extra` (merged at the top level).
  void WriteConfig(const json& extra) {
    json c = {{"state", {{"backend", "postgres"}, {"postgres_dsn_file", (dir_ / "dsn").string()}}},
              {"server", {{"state_dir", (dir_ / "state").string()}}},
              {"roles", {{"viewer", json::object()}}}};
    if (extra.is_object()) c.merge_patch(extra);
    std::ofstream(dir_ / "airlock.json", std::ios::trunc) << c.dump();
  }
  std::string Config() const { return " --config " + (dir_ / "airlock.json").string(); }

  Result Airlock(const std::string& args, const std::string& stdin_text = "") {
    const std::string err_file = (dir_ / ("stderr-" + std::to_string(++calls_))).string();
    std::string cmd = kAirlock + " " + args + " 2>" + err_file;
    if (!stdin_text.empty()) {
      std::ofstream(dir_ / "stdin") << stdin_text;
      cmd += " <" + (dir_ / "stdin").string();
    }
    FILE* p = popen(cmd.c_str(), "r");
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
  std::pair<std::string, std::string> CreateKey(const std::string& actor, const std::string& user,
                                                const std::string& role = "viewer") {
    Result r = Airlock("keys create --json" + Config() + " --as " + actor + " --user " + user + " --role " + role);
    EXPECT_EQ(r.rc, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    if (!j.is_object()) return {};
    return {j.value("id", ""), j.value("secret", "")};
  }

  // Raw SQL on the database, as someone with write access to it.
  void Tamper(const std::string& sql) {
    pqxx::connection c(dsn_);
    pqxx::nontransaction tx(c);
    EXPECT_EQ(tx.exec(sql).affected_rows(), 1u) << sql;
  }

  std::string dsn_;
  fs::path dir_;
  int calls_ = 0;
};

TEST_F(PgCliTest, AuditVerifyOnPostgresAfterRunsThenNamesTheTamperedRow) {
  auto [id1, s1] = CreateKey("alice", "erin");
  auto [id2, s2] = CreateKey("alice", "frank");
  ASSERT_FALSE(s1.empty());
  ASSERT_EQ(Airlock("keys revoke " + id1 + Config() + " --as bob").rc, 0);
  // A code-mode run: its run row goes to the database.
  Result run = Airlock("run --code-mode --lang javascript" + Config() + " -", "return 6 * 7;\n");
  ASSERT_EQ(run.rc, 0) << run.out << run.err;
  EXPECT_EQ(json::parse(run.out)["result"], 42) << run.out;

  Result verify = Airlock("audit verify" + Config());
  ASSERT_EQ(verify.rc, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.out.rfind("ok: 4 rows, head ", 0), 0u) << verify.out;
  Result rows = Airlock("audit --json" + Config());
  ASSERT_EQ(rows.rc, 0) << rows.err;
  json j = json::parse(rows.out);
  ASSERT_EQ(j.size(), 4u) << j.dump(2);
  EXPECT_EQ(j[0]["kind"], "key_create");
  EXPECT_EQ(j[2]["kind"], "key_revoke");
  EXPECT_EQ(j[3]["type"], "run");
  EXPECT_EQ(j[3]["status"], "SUCCESS");
  EXPECT_EQ(j[3]["code"], "return 6 * 7;\n");
  EXPECT_EQ(rows.out.find(s1), std::string::npos) << "no secret in the log";

  Tamper("UPDATE audit_events SET actor = 'mallory' WHERE id = 2");
  verify = Airlock("audit verify" + Config());
  EXPECT_EQ(verify.rc, 4) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("TAMPERED: modified: events id 2"), std::string::npos) << verify.out;
  Result as_json = Airlock("audit verify --json" + Config());
  EXPECT_EQ(as_json.rc, 4);
  EXPECT_EQ(json::parse(as_json.out)["problem"]["kind"], "modified") << as_json.out;

  Tamper("UPDATE audit_events SET actor = 'alice' WHERE id = 2");  // put back
  ASSERT_EQ(Airlock("audit verify" + Config()).rc, 0);
  Tamper("DELETE FROM audit_events WHERE id = 3");
  verify = Airlock("audit verify" + Config());
  EXPECT_EQ(verify.rc, 4) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("deleted"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("row id 3 is missing"), std::string::npos) << verify.out;
}

// Several CLI processes writing at once: `airlock keys create` appends an
// event from each, through connections of its own.
TEST_F(PgCliTest, ConcurrentCliProcessesKeepOneChain) {
  ASSERT_EQ(Airlock("keys list" + Config()).rc, 0);  // the schema, before the race
  constexpr int kProcesses = 8;
  std::vector<FILE*> running;
  for (int i = 0; i < kProcesses; ++i) {
    running.push_back(popen((kAirlock + " keys create" + Config() + " --as ops --user u" + std::to_string(i) +
                             " --role viewer 2>/dev/null")
                                .c_str(),
                            "r"));
  }
  for (FILE* p : running) {
    char buf[512];
    while (fread(buf, 1, sizeof buf, p) > 0) {
    }
    const int status = pclose(p);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Result verify = Airlock("audit verify --json" + Config());
  ASSERT_EQ(verify.rc, 0) << verify.out << verify.err;
  json report = json::parse(verify.out);
  EXPECT_EQ(report["ok"], true);
  EXPECT_EQ(report["rows_checked"], kProcesses) << verify.out;
  Result list = Airlock("keys list --json" + Config());
  ASSERT_EQ(list.rc, 0);
  EXPECT_EQ(json::parse(list.out).size(), static_cast<size_t>(kProcesses));
}

TEST_F(PgCliTest, ToolsApproveUsesTheDatabase) {
  auto db = state::PgDatabase::Connect(dsn_);
  ASSERT_TRUE(db.ok());
  auto store = codetools::PgCodeToolStore::Open(*db);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  codetools::Proposal p;
  p.name = "lookup";
  p.language = "javascript";
  p.code = "return 1;";
  p.connectors = {"crm"};
  auto t = (*store)->Propose(p, "bob", "default");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Result denied = Airlock("tools approve " + t->id + " --as alice" + Config());
  EXPECT_EQ(denied.rc, 3) << "alice is no admin yet: " << denied.err;
  CreateKey("root", "alice", "admin");  // her admin key, in the database
  Result list = Airlock("tools list --json" + Config());
  ASSERT_EQ(list.rc, 0) << list.err;
  EXPECT_NE(list.out.find(t->id), std::string::npos);
  Result approved = Airlock("tools approve " + t->id + " --as alice" + Config());
  ASSERT_EQ(approved.rc, 0) << approved.err;
  EXPECT_EQ((*store)->Get(t->id)->state, codetools::State::kApproved) << "seen by every store on the database";
  Result audit = Airlock("audit --json --type event --user alice" + Config());
  std::vector<std::string> decisions;
  for (const json& e : json::parse(audit.out)) {
    if (e["kind"] == "code_tool_approve") decisions.push_back(e["detail"].value("decision", ""));
  }
  EXPECT_EQ(decisions, (std::vector<std::string>{"denied", "allowed"})) << audit.out;
}

TEST_F(PgCliTest, ConfigErrorsAndAnUnreachableDatabaseAreRefused) {
  WriteConfig({{"server", {{"http", {{"keys_file", (dir_ / "keys.json").string()}}}}}});
  Result r = Airlock("audit" + Config());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("keys_file: must be empty with state.backend \"postgres\""), std::string::npos) << r.err;
  WriteConfig({{"state", {{"postgres_dsn", dsn_}}}});
  r = Airlock("audit" + Config());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("both set"), std::string::npos) << r.err;

  // Nothing listens on that port: serve refuses to start (it would run
  // without an audit log), and the other commands say why.
  std::ofstream(dir_ / "dsn", std::ios::trunc) << "host=127.0.0.1 port=1 dbname=x user=y password=s3cret";
  WriteConfig({});
  const auto start = std::chrono::steady_clock::now();
  r = Airlock("serve --http 127.0.0.1:0" + Config());
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_NE(r.err.find("audit log in PostgreSQL"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("host=127.0.0.1 port=1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << "no password in messages: " << r.err;
  r = Airlock("audit verify" + Config());
  EXPECT_EQ(r.rc, 1) << r.err;
  r = Airlock("keys list" + Config());
  EXPECT_EQ(r.rc, 1) << r.err;
  std::ofstream(dir_ / "dsn", std::ios::trunc) << dsn_;
  fs::remove(dir_ / "dsn");
  r = Airlock("audit verify" + Config());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("postgres_dsn_file"), std::string::npos) << r.err;
}

TEST_F(PgCliTest, AuditOfAnEmptyDatabaseIsMissingAndCreatesNothing) {
  Result r = Airlock("audit verify" + Config());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("no audit log"), std::string::npos) << r.err;
  pqxx::connection c(dsn_);
  pqxx::nontransaction tx(c);
  EXPECT_FALSE(tx.exec1("SELECT to_regclass('airlock_schema_migrations') IS NOT NULL")[0].as<bool>());
}

// --- two gateways ----------------------------------------------------------------

// `airlock serve --http 127.0.0.1:0` in the background; its URL once it listens.
struct Gateway {
  pid_t pid = -1;
  int port = 0;
};

Gateway StartGateway(const std::string& config, const fs::path& log) {
  Gateway g;
  g.pid = fork();
  if (g.pid == 0) {
    FILE* f = freopen(log.c_str(), "w", stderr);
    (void)f;
    FILE* o = freopen("/dev/null", "w", stdout);
    (void)o;
    execl(kAirlock.c_str(), "airlock", "serve", "--http", "127.0.0.1:0", "--config", config.c_str(), nullptr);
    _exit(127);
  }
  const std::regex url("serving MCP \\(Streamable HTTP\\) at http://127\\.0\\.0\\.1:([0-9]+)/mcp");
  for (int i = 0; i < 300 && g.port == 0; ++i) {
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    std::smatch m;
    const std::string s = text.str();
    if (std::regex_search(s, m, url)) g.port = std::stoi(m[1].str());
    if (waitpid(g.pid, nullptr, WNOHANG) == g.pid) {
      g.pid = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return g;
}

void StopGateway(Gateway& g) {
  if (g.pid <= 0) return;
  kill(g.pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (waitpid(g.pid, nullptr, WNOHANG) == g.pid) {
      g.pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(g.pid, SIGKILL);
  waitpid(g.pid, nullptr, 0);
  g.pid = -1;
}

// The HTTP status of an MCP initialize sent to `g` with `key`.
int Initialize(const Gateway& g, const std::string& key) {
  httplib::Client client("127.0.0.1", g.port);
  client.set_read_timeout(10);
  json init = {{"jsonrpc", "2.0"},
               {"id", 1},
               {"method", "initialize"},
               {"params",
                {{"protocolVersion", "2025-11-25"},
                 {"capabilities", json::object()},
                 {"clientInfo", {{"name", "pg-test"}, {"version", "1"}}}}}};
  httplib::Headers h = {{"Accept", "application/json, text/event-stream"}, {"Authorization", "Bearer " + key}};
  auto res = client.Post("/mcp", h, init.dump(), "application/json");
  return res ? res->status : -1;
}

TEST_F(PgCliTest, TwoGatewaysRefuseAKeyRevokedThroughTheCliOnTheNextRequest) {
  WriteConfig({{"server", {{"http", {{"api_keys", true}}}, {"shutdown_grace_s", 1}}}});
  auto [id, secret] = CreateKey("root", "erin", "admin");
  ASSERT_FALSE(secret.empty());
  Gateway a = StartGateway((dir_ / "airlock.json").string(), dir_ / "gateway-a.log");
  Gateway b = StartGateway((dir_ / "airlock.json").string(), dir_ / "gateway-b.log");
  std::stringstream log_a, log_b;
  log_a << std::ifstream(dir_ / "gateway-a.log").rdbuf();
  log_b << std::ifstream(dir_ / "gateway-b.log").rdbuf();
  ASSERT_GT(a.port, 0) << log_a.str();
  ASSERT_GT(b.port, 0) << log_b.str();
  EXPECT_EQ(Initialize(a, secret), 200);
  EXPECT_EQ(Initialize(b, secret), 200);
  EXPECT_EQ(Initialize(a, "alk_not-a-key"), 401);
  // A key created after the gateways started works on both at once.
  auto [id2, secret2] = CreateKey("root", "frank", "reader");
  EXPECT_EQ(Initialize(b, secret2), 200);

  ASSERT_EQ(Airlock("keys revoke " + id + Config() + " --as root").rc, 0);
  EXPECT_EQ(Initialize(a, secret), 401) << "gateway a, next request";
  EXPECT_EQ(Initialize(b, secret), 401) << "gateway b, next request";
  EXPECT_EQ(Initialize(a, secret2), 200);
  StopGateway(a);
  StopGateway(b);
}

}  // namespace
}  // namespace airlock
