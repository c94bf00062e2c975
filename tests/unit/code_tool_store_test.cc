// Stored code tools: validation, the hash that binds a version, the approval
// life cycle (G-D8 no self-approval, G-D9 tampered rows never active), two
// store objects on one store (a server and `airlock tools approve`, or two
// gateways), diffs. The store tests run against both backends: SQLite (a
// file) and PostgreSQL (a real server, pg_test_server.h); their names end
// in /Sqlite and /Postgres.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <pqxx/pqxx>
#include <sqlite3.h>

#include "codetools/code_tool_store.h"
#include "codetools/pg_code_tool_store.h"
#include "codetools/sqlite_code_tool_store.h"
#include "codetools/version_diff.h"
#include "pg_test_server.h"
#include "db/pg_database.h"

namespace airlock::codetools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Proposal Sample() {
  Proposal p;
  p.name = "lookup_customer";
  p.description = "Finds a customer by e-mail.";
  p.language = "javascript";
  p.code = "const r = await tools.crm.search({q: args.email});\nreturn r;\n";
  p.input_schema = {{"type", "object"}, {"properties", {{"email", {{"type", "string"}}}}}};
  p.connectors = {"crm"};
  p.tools = {"crm.search"};
  p.limits = {{"wall_ms", 5000}};
  return p;
}

enum class Backend { kSqlite, kPostgres };

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

// A store on either backend; OpenStore() opens another store object on the
// same data (another process, another gateway).
class CodeToolStoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / ("airlock-codetools-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "codetools.db").string();
    if (GetParam() == Backend::kPostgres) {
      dsn_ = testing::PgTestServer::Get().NewDatabase();
      ASSERT_FALSE(dsn_.empty()) << testing::PgTestServer::Get().error();
    }
    store_ = OpenStore();
    ASSERT_TRUE(store_ != nullptr);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  bool sqlite() const { return GetParam() == Backend::kSqlite; }

  std::unique_ptr<CodeToolStore> OpenStore() {
    if (sqlite()) {
      auto s = SqliteCodeToolStore::Open(path_);
      EXPECT_TRUE(s.ok()) << s.status().ToString();
      return s.ok() ? std::move(*s) : nullptr;
    }
    auto db = state::PgDatabase::Connect(dsn_);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return nullptr;
    auto s = PgCodeToolStore::Open(*db);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  CodeTool MustPropose(const Proposal& p, const std::string& proposer = "bob",
                       const std::string& endpoint = "team") {
    StatusOr<CodeTool> t = store_->Propose(p, proposer, endpoint);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : CodeTool{};
  }

  // Runs `sql` through a connection of its own (a person with write access
  // to the database, not the store).
  void RawSql(const std::string& sql) {
    if (!sqlite()) {
      try {
        pqxx::connection c(dsn_);
        pqxx::nontransaction tx(c);
        tx.exec(sql);
      } catch (const std::exception& e) {
        ADD_FAILURE() << sql << ": " << e.what();
      }
      return;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  fs::path dir_;
  std::string path_;  // sqlite
  std::string dsn_;   // postgres
  std::unique_ptr<CodeToolStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, CodeToolStoreTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         BackendName);

// --- validation ------------------------------------------------------------

struct BadCase {
  const char* what;
  std::function<void(Proposal&)> edit;
  const char* message;  // a part of the error
};

TEST(ValidateProposalTest, AcceptsTheSample) { EXPECT_TRUE(ValidateProposal(Sample()).ok()); }

TEST(ValidateProposalTest, RejectsEachBrokenField) {
  const BadCase cases[] = {
      {"empty name", [](Proposal& p) { p.name = ""; }, "name"},
      {"upper case name", [](Proposal& p) { p.name = "Lookup"; }, "name"},
      {"name with a dot", [](Proposal& p) { p.name = "crm.lookup"; }, "name"},
      {"name starting with a digit", [](Proposal& p) { p.name = "1lookup"; }, "name"},
      {"name too long", [](Proposal& p) { p.name = "a" + std::string(64, 'b'); }, "name"},
      {"description too long", [](Proposal& p) { p.description = std::string(4097, 'x'); }, "description"},
      {"description not UTF-8", [](Proposal& p) { p.description = "\xff"; }, "description"},
      {"language", [](Proposal& p) { p.language = "ruby"; }, "language"},
      {"empty code", [](Proposal& p) { p.code = ""; }, "code"},
      {"code too long", [](Proposal& p) { p.code = std::string(256 * 1024 + 1, 'x'); }, "code"},
      {"code not UTF-8", [](Proposal& p) { p.code = "return '\xc3';"; }, "code"},
      {"schema not an object", [](Proposal& p) { p.input_schema = json::array(); }, "input_schema"},
      {"schema without type", [](Proposal& p) { p.input_schema = json::object(); }, "input_schema"},
      {"schema of type string", [](Proposal& p) { p.input_schema = {{"type", "string"}}; }, "input_schema"},
      {"no connectors", [](Proposal& p) { p.connectors.clear(); p.tools.clear(); }, "connectors"},
      {"connector with a dot", [](Proposal& p) { p.connectors = {"crm", "a.b"}; }, "connectors[1]"},
      {"connector too long", [](Proposal& p) { p.connectors = {std::string(33, 'c')}; p.tools.clear(); },
       "connectors[0]"},
      {"tool without connector", [](Proposal& p) { p.tools = {"search"}; }, "tools[0]"},
      {"tool of an undeclared connector", [](Proposal& p) { p.tools = {"crm.search", "mail.send"}; },
       "tools[1]: connector \"mail\""},
      {"empty tool name", [](Proposal& p) { p.tools = {"crm."}; }, "tools[0]"},
      {"tool with a space", [](Proposal& p) { p.tools = {"crm.sea rch"}; }, "tools[0]"},
      {"limits not an object", [](Proposal& p) { p.limits = json::array(); }, "limits"},
      {"unknown limit", [](Proposal& p) { p.limits = {{"cpu_ms", 5}}; }, "limits.cpu_ms"},
      {"zero limit", [](Proposal& p) { p.limits = {{"max_calls", 0}}; }, "limits.max_calls"},
      {"negative limit", [](Proposal& p) { p.limits = {{"memory_mb", -1}}; }, "limits.memory_mb"},
      {"fractional limit", [](Proposal& p) { p.limits = {{"wall_ms", 1.5}}; }, "limits.wall_ms"},
      {"string limit", [](Proposal& p) { p.limits = {{"wall_ms", "100"}}; }, "limits.wall_ms"},
  };
  for (const BadCase& c : cases) {
    Proposal p = Sample();
    c.edit(p);
    Status st = ValidateProposal(p);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << c.what << ": " << st.message();
  }
}

TEST(ValidateProposalTest, AcceptsEdgeValues) {
  Proposal p = Sample();
  p.name = "a" + std::string(63, 'z');
  p.code = std::string(256 * 1024, 'x');
  p.description = std::string(4096, 'd');
  p.language = "python";
  p.connectors = {"crm", "Docs-2_x"};
  p.tools = {"crm.*", "Docs-2_x.search/v2.beta"};
  p.limits = {{"wall_ms", 1},          {"max_calls", 2},        {"max_concurrent", 3}, {"max_args_bytes", 4},
              {"max_result_bytes", 5}, {"max_console_bytes", 6}, {"memory_mb", 7}};
  EXPECT_TRUE(ValidateProposal(p).ok()) << ValidateProposal(p).ToString();
  p.tools.clear();  // every tool of the declared connectors
  EXPECT_TRUE(ValidateProposal(p).ok());
}

// --- the hash ----------------------------------------------------------------

TEST(HashOfTest, IsStableAndHex) {
  const std::string h = HashOf(Sample());
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(HashOf(Sample()), h);
  Proposal reordered = Sample();  // same schema, keys inserted in another order
  reordered.input_schema = json::object();
  reordered.input_schema["properties"] = {{"email", {{"type", "string"}}}};
  reordered.input_schema["type"] = "object";
  EXPECT_EQ(HashOf(reordered), h);
}

TEST(HashOfTest, ChangesWithEveryHashedFieldOnly) {
  const std::string base = HashOf(Sample());
  const std::pair<const char*, std::function<void(Proposal&)>> hashed[] = {
      {"language", [](Proposal& p) { p.language = "python"; }},
      {"code", [](Proposal& p) { p.code += " "; }},
      {"input_schema", [](Proposal& p) { p.input_schema["required"] = {"email"}; }},
      {"connectors", [](Proposal& p) { p.connectors.push_back("docs"); }},
      {"tools", [](Proposal& p) { p.tools = {"crm.*"}; }},
      {"limits", [](Proposal& p) { p.limits["wall_ms"] = 5001; }},
  };
  for (const auto& [what, edit] : hashed) {
    Proposal p = Sample();
    edit(p);
    EXPECT_NE(HashOf(p), base) << what;
  }
  Proposal p = Sample();
  p.name = "other_name";
  p.description = "Something else.";
  EXPECT_EQ(HashOf(p), base) << "name and description are not part of what the program may do";
}

TEST(HashOfTest, IllFormedUtf8HashesToNothing) {
  Proposal p = Sample();
  p.code = "\xff";
  EXPECT_EQ(HashOf(p), "");
}

// --- life cycle --------------------------------------------------------------

TEST_P(CodeToolStoreTest, ProposeStoresANormalizedVersion) {
  Proposal p = Sample();
  p.connectors = {"docs", "crm", "docs"};
  p.tools = {"docs.search", "crm.search", "docs.search"};
  CodeTool t = MustPropose(p);
  EXPECT_EQ(t.id.size(), 15u);
  EXPECT_EQ(t.id.rfind("ct_", 0), 0u);
  EXPECT_EQ(t.id.find_first_not_of("0123456789abcdef", 3), std::string::npos);
  EXPECT_EQ(t.version, 1);
  EXPECT_EQ(t.state, State::kProposed);
  EXPECT_GT(t.proposed_at, 0);
  EXPECT_EQ(t.proposal.connectors, (std::vector<std::string>{"crm", "docs"}));
  EXPECT_EQ(t.proposal.tools, (std::vector<std::string>{"crm.search", "docs.search"}));
  EXPECT_EQ(t.hash, HashOf(t.proposal));

  auto got = store_->Get(t.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->intact);
  EXPECT_EQ(got->hash, t.hash);
  EXPECT_EQ(got->proposal.code, p.code);
  EXPECT_EQ(got->proposal.description, p.description);
  EXPECT_EQ(got->proposal.input_schema, p.input_schema);
  EXPECT_EQ(got->proposal.limits, p.limits);
  EXPECT_EQ(got->proposal.connectors, t.proposal.connectors);
  EXPECT_EQ(got->proposer, "bob");
  EXPECT_EQ(got->endpoint, "team");
  EXPECT_EQ(got->proposed_at, t.proposed_at);

  if (sqlite()) {
    struct stat st;
    ASSERT_EQ(stat(path_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
}

TEST_P(CodeToolStoreTest, ProposeRefusesInvalidAndDuplicateVersions) {
  Proposal bad = Sample();
  bad.language = "perl";
  EXPECT_EQ(store_->Propose(bad, "bob", "team").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Propose(Sample(), "", "team").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Propose(Sample(), "bob", "").status().code(), StatusCode::kInvalidArgument);

  CodeTool v1 = MustPropose(Sample());
  StatusOr<CodeTool> dup = store_->Propose(Sample(), "carol", "team");
  EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.status().message().find(v1.id), std::string::npos) << dup.status().message();
  // The same program under another name or endpoint is a different tool.
  Proposal renamed = Sample();
  renamed.name = "find_customer";
  EXPECT_EQ(MustPropose(renamed).version, 1);
  EXPECT_EQ(MustPropose(Sample(), "bob", "ops").version, 1);
  auto all = store_->List(std::nullopt, "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);

  // Once rejected, the identical program may be proposed again.
  ASSERT_TRUE(store_->Reject(v1.id, "alice", "not now").ok());
  EXPECT_EQ(MustPropose(Sample()).version, 2);
}

TEST_P(CodeToolStoreTest, ApproveMakesAVersionActiveAndRecordsTheApproval) {
  CodeTool t = MustPropose(Sample());
  auto active = store_->Active("team");
  ASSERT_TRUE(active.ok());
  EXPECT_TRUE(active->empty()) << "a proposal is not active";

  Status st = store_->Approve(t.id, "alice",
                              {.allow_write = true, .run_as_definer = true, .definer_role = "dev", .reason = "ok"});
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto got = store_->Get(t.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, State::kApproved);
  EXPECT_EQ(got->decided_by, "alice");
  EXPECT_EQ(got->approved_by, "alice");
  EXPECT_GT(got->approved_at, 0);
  EXPECT_TRUE(got->approval.allow_write);
  EXPECT_TRUE(got->approval.run_as_definer);
  EXPECT_EQ(got->approval.definer_role, "dev");
  EXPECT_EQ(got->approval.reason, "ok");
  active = store_->Active("team");
  ASSERT_TRUE(active.ok());
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].id, t.id);
  EXPECT_TRUE(store_->Active("ops")->empty()) << "offered only on the endpoint it was proposed on";

  // Approving twice, or approving with a definer flag but no role, is refused.
  EXPECT_EQ(store_->Approve(t.id, "carol", {}).code(), StatusCode::kFailedPrecondition);
  CodeTool other = MustPropose([] { Proposal p = Sample(); p.name = "other"; return p; }());
  Approval no_role;
  no_role.run_as_definer = true;
  EXPECT_EQ(store_->Approve(other.id, "alice", no_role).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Approve(other.id, "", {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Approve("ct_000000000000", "alice", {}).code(), StatusCode::kNotFound);
}

TEST_P(CodeToolStoreTest, NobodyDecidesOnTheirOwnProposal) {
  CodeTool t = MustPropose(Sample(), "alice");
  EXPECT_EQ(store_->Approve(t.id, "alice", {}).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->Reject(t.id, "alice", "").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->Get(t.id)->state, State::kProposed);
  EXPECT_TRUE(store_->Approve(t.id, "bob", {}).ok());
  // Withdrawing one's own approved tool is allowed: it only takes power away.
  EXPECT_TRUE(store_->Revoke(t.id, "alice", "mine, no longer needed").ok());
}

TEST_P(CodeToolStoreTest, ANewVersionWaitsThenSupersedesTheOldOne) {
  CodeTool v1 = MustPropose(Sample());
  ASSERT_TRUE(store_->Approve(v1.id, "alice", {}).ok());
  Proposal changed = Sample();
  changed.code += "// v2\n";
  CodeTool v2 = MustPropose(changed);
  EXPECT_EQ(v2.version, 2);
  auto active = store_->Active("team");
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].id, v1.id) << "the approved version stays active while v2 waits";

  ASSERT_TRUE(store_->Approve(v2.id, "alice", {}).ok());
  active = store_->Active("team");
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].id, v2.id);
  auto old = store_->Get(v1.id);
  EXPECT_EQ(old->state, State::kSuperseded);
  EXPECT_EQ(old->approved_by, "alice") << "a supersede keeps who approved it";
  EXPECT_EQ(store_->Revoke(v1.id, "alice", "").code(), StatusCode::kFailedPrecondition);

  auto superseded = store_->List(State::kSuperseded, "");
  ASSERT_EQ(superseded->size(), 1u);
  auto list = store_->List(std::nullopt, "team");
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, v2.id) << "newest first";
}

TEST_P(CodeToolStoreTest, RejectAndRevoke) {
  CodeTool a = MustPropose(Sample());
  EXPECT_EQ(store_->Revoke(a.id, "alice", "").code(), StatusCode::kFailedPrecondition) << "not approved";
  ASSERT_TRUE(store_->Reject(a.id, "alice", "too broad").ok());
  auto got = store_->Get(a.id);
  EXPECT_EQ(got->state, State::kRejected);
  EXPECT_EQ(got->decided_by, "alice");
  EXPECT_EQ(got->reason, "too broad");
  EXPECT_EQ(store_->Approve(a.id, "carol", {}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->Reject(a.id, "carol", "").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->Reject("ct_000000000000", "carol", "").code(), StatusCode::kNotFound);

  Proposal p = Sample();
  p.code += "// again\n";
  CodeTool b = MustPropose(p);
  ASSERT_TRUE(store_->Approve(b.id, "alice", {}).ok());
  ASSERT_TRUE(store_->Revoke(b.id, "carol", "leaks data").ok());
  got = store_->Get(b.id);
  EXPECT_EQ(got->state, State::kRevoked);
  EXPECT_EQ(got->decided_by, "carol");
  EXPECT_EQ(got->approved_by, "alice");
  EXPECT_EQ(got->reason, "leaks data");
  EXPECT_TRUE(store_->Active("team")->empty());
  EXPECT_EQ(store_->Approve(b.id, "dave", {}).code(), StatusCode::kFailedPrecondition) << "no way back";
  EXPECT_EQ(store_->Revoke("ct_000000000000", "carol", "").code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->List(State::kRevoked, "team")->size(), 1u);
  EXPECT_EQ(store_->List(State::kRejected, "ops")->size(), 0u);
}

// --- tampering (G-D9) ----------------------------------------------------------

TEST_P(CodeToolStoreTest, AnEditedApprovedRowIsNotActive) {
  CodeTool t = MustPropose(Sample());
  ASSERT_TRUE(store_->Approve(t.id, "alice", {}).ok());
  RawSql("UPDATE code_tools SET code = 'return await tools.crm.delete_all({});' WHERE id = '" + t.id + "'");
  auto got = store_->Get(t.id);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->intact);
  EXPECT_EQ(got->state, State::kApproved);
  EXPECT_TRUE(store_->Active("team")->empty());
  auto listed = store_->List(std::nullopt, "");
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_FALSE((*listed)[0].intact);
}

TEST_P(CodeToolStoreTest, EveryHashedColumnIsCovered) {
  const std::string edits[] = {
      "language = 'python'",
      "code = code || ' '",
      "input_schema = '{\"type\":\"object\",\"properties\":{}}'",
      "connectors = '[\"crm\",\"mail\"]'",
      "tools = '[\"crm.*\"]'",
      "limits = '{}'",
      "limits = 'not json'",
      "connectors = '{\"crm\":1}'",
      "hash = '" + std::string(64, '0') + "'",
      "state = 'approved!'",
  };
  for (const std::string& edit : edits) {
    Proposal p = Sample();
    p.name = "t" + std::to_string(&edit - edits);
    CodeTool t = MustPropose(p);
    ASSERT_TRUE(store_->Approve(t.id, "alice", {}).ok());
    RawSql("UPDATE code_tools SET " + edit + " WHERE id = '" + t.id + "'");
    EXPECT_FALSE(store_->Get(t.id)->intact) << edit;
  }
  EXPECT_TRUE(store_->Active("team")->empty());
  // Fields outside the hash may change without breaking it.
  CodeTool t = MustPropose(Sample());
  RawSql("UPDATE code_tools SET description = 'reworded' WHERE id = '" + t.id + "'");
  EXPECT_TRUE(store_->Get(t.id)->intact);
}

TEST_P(CodeToolStoreTest, AnEditedProposalCannotBeApproved) {
  CodeTool t = MustPropose(Sample());
  RawSql("UPDATE code_tools SET tools = '[\"crm.*\"]' WHERE id = '" + t.id + "'");
  Status st = store_->Approve(t.id, "alice", {});
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("hash"), std::string::npos) << st.message();
  EXPECT_EQ(store_->Get(t.id)->state, State::kProposed);
  EXPECT_TRUE(store_->Active("team")->empty());
  // Rejecting it is still possible: that takes nothing away.
  EXPECT_TRUE(store_->Reject(t.id, "alice", "tampered").ok());
}

TEST_P(CodeToolStoreTest, AnEditedNewVersionDoesNotHideTheApprovedOne) {
  CodeTool v1 = MustPropose(Sample());
  ASSERT_TRUE(store_->Approve(v1.id, "alice", {}).ok());
  Proposal p = Sample();
  p.code += "// v2\n";
  CodeTool v2 = MustPropose(p);
  // Someone marks v2 approved behind the store's back and edits its code:
  // the newest approved version is tampered, so the name is offered not at all.
  RawSql("UPDATE code_tools SET state = 'approved', code = 'evil()' WHERE id = '" + v2.id + "'");
  auto active = store_->Active("team");
  ASSERT_TRUE(active.ok());
  EXPECT_TRUE(active->empty());
}

TEST_P(CodeToolStoreTest, ADeletedRowIsGone) {
  CodeTool v1 = MustPropose(Sample());
  ASSERT_TRUE(store_->Approve(v1.id, "alice", {}).ok());
  Proposal p = Sample();
  p.code += "// v2\n";
  CodeTool v2 = MustPropose(p);
  ASSERT_TRUE(store_->Approve(v2.id, "alice", {}).ok());
  RawSql("DELETE FROM code_tools WHERE id = '" + v2.id + "'");
  EXPECT_EQ(store_->Get(v2.id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Active("team")->empty()) << "the superseded v1 does not come back";
  EXPECT_EQ(store_->Get(v1.id)->state, State::kSuperseded);
  // Numbering goes on after the highest remaining version.
  Proposal p3 = Sample();
  p3.code += "// v3\n";
  EXPECT_EQ(MustPropose(p3).version, 2);
}

// --- several processes ---------------------------------------------------------

TEST_P(CodeToolStoreTest, GenerationSeesChangesFromAnotherConnection) {
  std::unique_ptr<CodeToolStore> other = OpenStore();  // `airlock tools approve`, another gateway
  ASSERT_TRUE(other != nullptr);
  const int64_t g0 = store_->Generation();
  EXPECT_EQ(store_->Generation(), g0) << "nothing changed";

  CodeTool t = MustPropose(Sample());  // through store_
  const int64_t g1 = store_->Generation();
  EXPECT_NE(g1, g0) << "own change";
  const int64_t o1 = other->Generation();

  ASSERT_TRUE(other->Approve(t.id, "alice", {}).ok());  // through the other connection
  const int64_t g2 = store_->Generation();
  EXPECT_NE(g2, g1) << "the other connection's approval";
  EXPECT_EQ(store_->Generation(), g2);
  EXPECT_NE(other->Generation(), o1);
  auto active = store_->Active("team");
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].id, t.id);

  // A refused change changes nothing.
  EXPECT_FALSE(other->Approve(t.id, "carol", {}).ok());
  EXPECT_EQ(store_->Generation(), g2);

  // An edit with plain SQL (not through a store) is seen too.
  RawSql("UPDATE code_tools SET code = 'x' WHERE id = '" + t.id + "'");
  const int64_t g3 = store_->Generation();
  EXPECT_NE(g3, g2);
  EXPECT_TRUE(store_->Active("team")->empty());
  EXPECT_EQ(store_->Generation(), g3);
}

TEST_P(CodeToolStoreTest, ReopenKeepsEverything) {
  CodeTool t = MustPropose(Sample());
  Approval write;
  write.allow_write = true;
  ASSERT_TRUE(store_->Approve(t.id, "alice", write).ok());
  store_.reset();
  std::unique_ptr<CodeToolStore> again = OpenStore();
  ASSERT_TRUE(again != nullptr);
  auto active = again->Active("team");
  ASSERT_EQ(active->size(), 1u);
  EXPECT_TRUE((*active)[0].approval.allow_write);
  EXPECT_TRUE((*active)[0].intact);
}

// Backend-specific tests share the fixture.
class SqliteCodeToolStoreTest : public CodeToolStoreTest {};
INSTANTIATE_TEST_SUITE_P(Backend, SqliteCodeToolStoreTest, ::testing::Values(Backend::kSqlite), BackendName);
class PgCodeToolStoreTest : public CodeToolStoreTest {};
INSTANTIATE_TEST_SUITE_P(Backend, PgCodeToolStoreTest, ::testing::Values(Backend::kPostgres), BackendName);

TEST_P(SqliteCodeToolStoreTest, OpenRefusesASymlinkAndTightensTheMode) {
  const std::string link = (dir_ / "link.db").string();
  ASSERT_EQ(symlink(path_.c_str(), link.c_str()), 0);
  EXPECT_FALSE(SqliteCodeToolStore::Open(link).ok());
  const std::string loose = (dir_ / "loose.db").string();
  { std::ofstream(loose) << ""; }
  ASSERT_EQ(chmod(loose.c_str(), 0644), 0);
  ASSERT_TRUE(SqliteCodeToolStore::Open(loose).ok());
  struct stat st;
  ASSERT_EQ(stat(loose.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// Several gateways share one database: an approval (or a revocation) made
// through one reaches another's Generation(), which `airlock serve` polls
// every 500 ms, and its Active(), at once.
TEST_P(PgCodeToolStoreTest, AnApprovalReachesAnotherGatewayWithinASecond) {
  std::unique_ptr<CodeToolStore> other = OpenStore();
  ASSERT_TRUE(other != nullptr);
  CodeTool t = MustPropose(Sample());
  std::atomic<bool> seen{false};
  std::atomic<int64_t> seen_after_ms{-1};
  const int64_t g0 = other->Generation();
  std::atomic<int64_t> approved_at{0};  // steady clock, ms
  std::thread poller([&] {  // the other gateway's watcher, polling faster than serve does
    for (int i = 0; i < 200 && !seen; ++i) {
      if (other->Generation() != g0 && approved_at.load() != 0) {
        auto active = other->Active("team");
        if (active.ok() && active->size() == 1) {
          seen_after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count() -
                          approved_at.load();
          seen = true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  approved_at.store(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count());
  ASSERT_TRUE(store_->Approve(t.id, "alice", {}).ok());
  poller.join();
  ASSERT_TRUE(seen.load()) << "the other gateway never saw the approval";
  EXPECT_LT(seen_after_ms.load(), 1000);
  // A revocation is seen the same way; the tool is gone from Active() at once.
  const int64_t g1 = other->Generation();
  ASSERT_TRUE(store_->Revoke(t.id, "carol", "leaks").ok());
  EXPECT_NE(other->Generation(), g1);
  EXPECT_TRUE(other->Active("team")->empty());
}

// Gateways proposing new versions of one tool at once: the store's lock
// row serializes them, so versions are 1..n with no duplicate and no error.
TEST_P(PgCodeToolStoreTest, ConcurrentProposalsFromSeveralGatewaysGetDistinctVersions) {
  constexpr int kGateways = 4, kEach = 5;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int g = 0; g < kGateways; ++g) {
    threads.emplace_back([&, g] {
      std::unique_ptr<CodeToolStore> gw = OpenStore();
      if (gw == nullptr) {
        ++failures;
        return;
      }
      for (int i = 0; i < kEach; ++i) {
        Proposal p = Sample();
        p.code += "// gateway " + std::to_string(g) + " take " + std::to_string(i) + "\n";
        if (!gw->Propose(p, "bob", "team").ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto all = store_->List(std::nullopt, "team");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), static_cast<size_t>(kGateways * kEach));
  std::vector<int64_t> versions;
  for (const CodeTool& t : *all) versions.push_back(t.version);
  std::sort(versions.begin(), versions.end());
  for (size_t i = 0; i < versions.size(); ++i) EXPECT_EQ(versions[i], static_cast<int64_t>(i + 1));
}

TEST_P(PgCodeToolStoreTest, TextWithANulByteIsRefused) {
  Proposal p = Sample();
  p.code = std::string("return 1;\0", 10);
  EXPECT_EQ(store_->Propose(p, "bob", "team").status().code(), StatusCode::kInvalidArgument);
  CodeTool t = MustPropose(Sample());
  EXPECT_EQ(store_->Reject(t.id, "alice", std::string("a\0b", 3)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Get(std::string("ct_\0", 4)).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Get(t.id)->state, State::kProposed);
}

// --- diffs ---------------------------------------------------------------------

TEST(UnifiedLineDiffTest, Hunks) {
  EXPECT_EQ(UnifiedLineDiff("a\nb\n", "a\nb\n"), "");
  EXPECT_EQ(UnifiedLineDiff("a\nb\nc\n", "a\nB\nc\n"), "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  EXPECT_EQ(UnifiedLineDiff("", "x\ny\n"), "@@ -0,0 +1,2 @@\n+x\n+y\n");
  EXPECT_EQ(UnifiedLineDiff("x\n", ""), "@@ -1,1 +0,0 @@\n-x\n");
  // Two changes far apart: two hunks with 1 line of context each.
  std::string from, to;
  for (int i = 1; i <= 20; ++i) {
    from += std::to_string(i) + "\n";
    to += (i == 3 ? "three" : i == 17 ? "seventeen" : std::to_string(i)) + "\n";
  }
  EXPECT_EQ(UnifiedLineDiff(from, to, 1),
            "@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n@@ -16,3 +16,3 @@\n 16\n-17\n+seventeen\n 18\n");
  // An insertion inside: the LCS keeps the common lines.
  EXPECT_EQ(UnifiedLineDiff("a\nb\nc\nd\n", "a\nx\nb\nc\nd\n", 0), "@@ -1,0 +2,1 @@\n+x\n");
}

TEST(UnifiedLineDiffTest, LargeInputsFallBackToReplaceAll) {
  std::string from, to;
  for (int i = 0; i < 3000; ++i) {
    from += "a" + std::to_string(i) + "\n";
    to += "b" + std::to_string(i) + "\n";
  }
  const std::string d = UnifiedLineDiff(from, to, 0);
  EXPECT_EQ(d.rfind("@@ -1,3000 +1,3000 @@\n-a0\n", 0), 0u) << d.substr(0, 60);
  EXPECT_NE(d.find("+b2999\n"), std::string::npos);
}

TEST_P(CodeToolStoreTest, DiffVersionsShowsWhatChanged) {
  CodeTool v1 = MustPropose(Sample());
  ASSERT_TRUE(store_->Approve(v1.id, "alice", {}).ok());
  Proposal p = Sample();
  p.code = "const r = await tools.crm.search({q: args.email});\nawait tools.crm.update({id: r.id});\nreturn r;\n";
  p.tools = {"crm.search", "crm.update"};
  CodeTool v2 = MustPropose(p);
  const CodeTool from = *store_->Get(v1.id);
  const std::string d = DiffVersions(&from, v2);
  EXPECT_NE(d.find("--- " + v1.id + " (team/lookup_customer version 1, approved)\n"), std::string::npos) << d;
  EXPECT_NE(d.find("+++ " + v2.id + " (team/lookup_customer version 2, proposed)\n"), std::string::npos) << d;
  EXPECT_NE(d.find("=== tools\n@@ -1,1 +1,2 @@\n crm.search\n+crm.update\n"), std::string::npos) << d;
  EXPECT_NE(d.find("=== code\n"), std::string::npos) << d;
  EXPECT_NE(d.find("+await tools.crm.update({id: r.id});\n"), std::string::npos) << d;
  EXPECT_EQ(d.find("=== description"), std::string::npos) << d;
  EXPECT_EQ(d.find("=== limits"), std::string::npos) << d;

  const std::string fresh = DiffVersions(nullptr, v1);
  EXPECT_NE(fresh.find("--- (no approved version)\n"), std::string::npos) << fresh;
  EXPECT_NE(fresh.find("=== code\n@@ -0,0 +1,2 @@\n+const r"), std::string::npos) << fresh;
  EXPECT_NE(fresh.find("=== connectors\n@@ -0,0 +1,1 @@\n+crm\n"), std::string::npos) << fresh;
  EXPECT_NE(fresh.find("\"wall_ms\": 5000"), std::string::npos) << fresh;

  EXPECT_NE(DiffVersions(&from, from).find("(no differences)\n"), std::string::npos);

  RawSql("UPDATE code_tools SET code = 'evil()' WHERE id = '" + v1.id + "'");
  const CodeTool tampered = *store_->Get(v1.id);
  EXPECT_NE(DiffVersions(&tampered, v2).find("!!! " + v1.id), std::string::npos);
}

}  // namespace
}  // namespace airlock::codetools
