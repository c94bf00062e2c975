#include "codetools/sqlite_code_tool_store.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "base/unique_fd.h"

namespace airlock::codetools {
namespace {

using audit::SqliteDb;
using audit::SqliteStmt;
using nlohmann::json;

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS code_tools ("
    " seq INTEGER PRIMARY KEY,"
    " id TEXT NOT NULL UNIQUE,"
    " endpoint TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,"
    " description TEXT NOT NULL, language TEXT NOT NULL, code TEXT NOT NULL,"
    " input_schema TEXT NOT NULL, connectors TEXT NOT NULL, tools TEXT NOT NULL, limits TEXT NOT NULL,"
    " hash TEXT NOT NULL, state TEXT NOT NULL,"
    " proposer TEXT NOT NULL, proposed_at INTEGER NOT NULL,"
    " decided_by TEXT NOT NULL DEFAULT '', decided_at INTEGER NOT NULL DEFAULT 0,"
    " approved_by TEXT NOT NULL DEFAULT '', approved_at INTEGER NOT NULL DEFAULT 0,"
    " allow_write INTEGER NOT NULL DEFAULT 0, run_as_definer INTEGER NOT NULL DEFAULT 0,"
    " definer_role TEXT NOT NULL DEFAULT '', approval_reason TEXT NOT NULL DEFAULT '',"
    " reason TEXT NOT NULL DEFAULT '',"
    " UNIQUE (endpoint, name, version)) STRICT;"
    "CREATE INDEX IF NOT EXISTS code_tools_by_name ON code_tools (endpoint, name, state);"
    "CREATE TABLE IF NOT EXISTS code_tools_meta ("
    " singleton INTEGER PRIMARY KEY CHECK (singleton = 1), generation INTEGER NOT NULL) STRICT;"
    "INSERT OR IGNORE INTO code_tools_meta VALUES (1, 0);";

// In this order, everywhere a row is read.
constexpr char kColumns[] =
    "id, endpoint, name, version, description, language, code, input_schema, connectors, tools, limits, hash, "
    "state, proposer, proposed_at, decided_by, decided_at, approved_by, approved_at, allow_write, run_as_definer, "
    "definer_role, approval_reason, reason";

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status CreateFile0600(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return ErrnoError("open " + path);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError("fstat " + path);
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a regular file");
  if ((st.st_mode & 07777) != 0600 && fchmod(fd.get(), 0600) != 0) return ErrnoError("fchmod " + path);
  return OkStatus();
}

StatusOr<std::string> NewId() {
  unsigned char bytes[6];
  size_t done = 0;
  while (done < sizeof bytes) {
    const ssize_t got = getrandom(bytes + done, sizeof bytes - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoError("getrandom");
    done += static_cast<size_t>(got);
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string id = "ct_";
  for (unsigned char b : bytes) {
    id.push_back(kDigits[b >> 4]);
    id.push_back(kDigits[b & 15]);
  }
  return id;
}

std::optional<State> StateFromName(const std::string& s) {
  for (State st : {State::kProposed, State::kApproved, State::kRejected, State::kRevoked, State::kSuperseded}) {
    if (s == StateName(st)) return st;
  }
  return std::nullopt;
}

// A JSON column; nullopt if it does not parse.
std::optional<json> ParseJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// A JSON array of strings; nullopt for anything else.
std::optional<std::vector<std::string>> ParseStrings(const std::string& text) {
  std::optional<json> j = ParseJson(text);
  if (!j || !j->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const json& e : *j) {
    if (!e.is_string()) return std::nullopt;
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The current row of a SELECT of kColumns. intact = the row's stored fields
// still hash to its stored hash (and every column reads back as written).
CodeTool ReadRow(const SqliteStmt& st) {
  CodeTool t;
  int c = 0;
  bool ok = true;
  auto text = [&]() {
    const int col = c++;
    if (st.ColumnType(col) != SQLITE_TEXT) ok = false;
    return st.ColumnText(col);
  };
  auto integer = [&]() { return st.ColumnInt64(c++); };
  t.id = text();
  t.endpoint = text();
  t.proposal.name = text();
  t.version = integer();
  t.proposal.description = text();
  t.proposal.language = text();
  t.proposal.code = text();
  const std::string schema = text(), connectors = text(), tools = text(), limits = text();
  t.hash = text();
  const std::string state = text();
  t.proposer = text();
  t.proposed_at = integer();
  t.decided_by = text();
  t.decided_at = integer();
  t.approved_by = text();
  t.approved_at = integer();
  t.approval.allow_write = integer() != 0;
  t.approval.run_as_definer = integer() != 0;
  t.approval.definer_role = text();
  t.approval.reason = text();
  t.reason = text();

  std::optional<json> schema_json = ParseJson(schema), limits_json = ParseJson(limits);
  std::optional<std::vector<std::string>> connector_list = ParseStrings(connectors), tool_list = ParseStrings(tools);
  t.proposal.input_schema = schema_json ? *schema_json : json(schema);
  t.proposal.limits = limits_json ? *limits_json : json(limits);
  if (connector_list) t.proposal.connectors = *connector_list;
  if (tool_list) t.proposal.tools = *tool_list;
  std::optional<State> s = StateFromName(state);
  t.state = s.value_or(State::kRevoked);  // an unknown state is never active
  t.intact = ok && s && schema_json && limits_json && connector_list && tool_list && !t.hash.empty() &&
             HashOf(t.proposal) == t.hash;
  return t;
}

// Sorted, unique: the stored form of connectors and tools.
std::vector<std::string> SortedUnique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

StatusOr<bool> Step(SqliteStmt& st, const char* what) {
  StatusOr<bool> row = st.Step();
  if (!row.ok()) return row.status().WithContext(what);
  return row;
}

}  // namespace

StatusOr<std::unique_ptr<CodeToolStore>> OpenSqliteCodeToolStore(const std::string& path) {
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<SqliteCodeToolStore> store, SqliteCodeToolStore::Open(path));
  return std::unique_ptr<CodeToolStore>(std::move(store));
}

SqliteCodeToolStore::SqliteCodeToolStore(SqliteDb db, Options options)
    : options_(std::move(options)), db_(std::move(db)) {
  if (!options_.now_ms) options_.now_ms = SystemNowMs;
}

StatusOr<std::unique_ptr<SqliteCodeToolStore>> SqliteCodeToolStore::Open(const std::string& path,
                                                                         Options options) {
  AIRLOCK_RETURN_IF_ERROR(CreateFile0600(path));
  AIRLOCK_ASSIGN_OR_RETURN(
      SqliteDb db, SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW));
  sqlite3_busy_timeout(db.get(), 5000);
  {
    AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt wal, db.Prepare("PRAGMA journal_mode=WAL"));
    AIRLOCK_ASSIGN_OR_RETURN(bool row, wal.Step());
    if (!row || wal.ColumnText(0) != "wal") {
      return Unavailable("code tool store " + path + ": cannot switch to WAL mode");
    }
  }
  AIRLOCK_RETURN_IF_ERROR(db.Exec("PRAGMA synchronous=FULL"));
  AIRLOCK_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  if (Status st = db.Exec(kSchema); !st.ok()) {
    (void)db.Exec("ROLLBACK");
    return st.WithContext("code tool store " + path);
  }
  AIRLOCK_RETURN_IF_ERROR(db.Exec("COMMIT"));
  std::unique_ptr<SqliteCodeToolStore> store(new SqliteCodeToolStore(std::move(db), std::move(options)));
  AIRLOCK_ASSIGN_OR_RETURN(store->data_version_, store->db_.Prepare("PRAGMA data_version"));
  AIRLOCK_ASSIGN_OR_RETURN(store->read_counter_,
                           store->db_.Prepare("SELECT generation FROM code_tools_meta WHERE singleton = 1"));
  return store;
}

Status SqliteCodeToolStore::InTransaction(const std::function<Status()>& body) {
  AIRLOCK_RETURN_IF_ERROR(db_.Exec("BEGIN IMMEDIATE"));
  Status st = body();
  if (st.ok()) st = db_.Exec("UPDATE code_tools_meta SET generation = generation + 1 WHERE singleton = 1");
  if (st.ok()) st = db_.Exec("COMMIT");
  if (!st.ok()) {
    (void)db_.Exec("ROLLBACK");
    return st;
  }
  dirty_ = true;
  return OkStatus();
}

StatusOr<std::vector<CodeTool>> SqliteCodeToolStore::Select(const std::string& where,
                                                            const std::vector<std::string>& args) {
  AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt st, db_.Prepare(std::string("SELECT ") + kColumns +
                                                      " FROM code_tools WHERE " + where + " ORDER BY seq DESC"));
  for (size_t i = 0; i < args.size(); ++i) st.Bind(static_cast<int>(i + 1), args[i]);
  std::vector<CodeTool> out;
  while (true) {
    AIRLOCK_ASSIGN_OR_RETURN(bool row, Step(st, "code tool store read"));
    if (!row) break;
    out.push_back(ReadRow(st));
  }
  return out;
}

StatusOr<CodeTool> SqliteCodeToolStore::GetLocked(const std::string& id) {
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<CodeTool> rows, Select("id = ?1", {id}));
  if (rows.empty()) return NotFound("no code tool " + id);
  return rows.front();
}

StatusOr<CodeTool> SqliteCodeToolStore::Propose(const Proposal& p, const std::string& proposer,
                                                const std::string& endpoint) {
  AIRLOCK_RETURN_IF_ERROR(ValidateProposal(p));
  if (proposer.empty()) return InvalidArgument("proposer: empty");
  if (endpoint.empty()) return InvalidArgument("endpoint: empty");
  CodeTool t;
  t.proposal = p;
  t.proposal.connectors = SortedUnique(p.connectors);
  t.proposal.tools = SortedUnique(p.tools);
  t.hash = HashOf(t.proposal);
  t.endpoint = endpoint;
  t.proposer = proposer;
  t.state = State::kProposed;
  AIRLOCK_ASSIGN_OR_RETURN(t.id, NewId());

  std::lock_guard<std::mutex> lock(mu_);
  t.proposed_at = options_.now_ms();
  AIRLOCK_RETURN_IF_ERROR(InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(
        std::vector<CodeTool> same,
        Select("endpoint = ?1 AND name = ?2 AND hash = ?3 AND state IN ('proposed', 'approved')",
               {endpoint, p.name, t.hash}));
    if (!same.empty()) {
      return InvalidArgument("an identical version of " + p.name + " is already " + StateName(same[0].state) +
                             " (" + same[0].id + ", version " + std::to_string(same[0].version) + ")");
    }
    AIRLOCK_ASSIGN_OR_RETURN(
        SqliteStmt max, db_.Prepare("SELECT COALESCE(MAX(version), 0) FROM code_tools WHERE endpoint = ?1 AND name = ?2"));
    max.Bind(1, endpoint);
    max.Bind(2, p.name);
    AIRLOCK_ASSIGN_OR_RETURN(bool row, Step(max, "code tool store read"));
    t.version = (row ? max.ColumnInt64(0) : 0) + 1;
    AIRLOCK_ASSIGN_OR_RETURN(
        SqliteStmt ins,
        db_.Prepare("INSERT INTO code_tools (id, endpoint, name, version, description, language, code, "
                    "input_schema, connectors, tools, limits, hash, state, proposer, proposed_at) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'proposed', ?13, ?14)"));
    int i = 1;
    ins.Bind(i++, t.id);
    ins.Bind(i++, endpoint);
    ins.Bind(i++, p.name);
    ins.Bind(i++, t.version);
    ins.Bind(i++, p.description);
    ins.Bind(i++, p.language);
    ins.Bind(i++, p.code);
    ins.Bind(i++, Dump(t.proposal.input_schema));
    ins.Bind(i++, Dump(t.proposal.connectors));
    ins.Bind(i++, Dump(t.proposal.tools));
    ins.Bind(i++, Dump(t.proposal.limits));
    ins.Bind(i++, t.hash);
    ins.Bind(i++, proposer);
    ins.Bind(i++, t.proposed_at);
    return Step(ins, "code tool store write").status();
  }));
  return t;
}

Status SqliteCodeToolStore::Approve(const std::string& id, const std::string& actor, const Approval& approval) {
  if (actor.empty()) return InvalidArgument("approver: empty");
  if (approval.run_as_definer && approval.definer_role.empty()) {
    return InvalidArgument("run_as_definer needs a definer_role");
  }
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetLocked(id));
    if (t.proposer == actor) return PermissionDenied(actor + " proposed " + id + " and cannot approve it");
    if (t.state != State::kProposed) {
      return FailedPrecondition(id + " is " + StateName(t.state) + "; only a proposed version can be approved");
    }
    if (!t.intact) {
      return FailedPrecondition(id + ": its stored fields no longer match its hash (edited in the database)");
    }
    AIRLOCK_ASSIGN_OR_RETURN(
        SqliteStmt old, db_.Prepare("UPDATE code_tools SET state = 'superseded' "
                                    "WHERE endpoint = ?1 AND name = ?2 AND state = 'approved'"));
    old.Bind(1, t.endpoint);
    old.Bind(2, t.proposal.name);
    AIRLOCK_RETURN_IF_ERROR(Step(old, "code tool store write").status());
    AIRLOCK_ASSIGN_OR_RETURN(
        SqliteStmt up,
        db_.Prepare("UPDATE code_tools SET state = 'approved', decided_by = ?2, decided_at = ?3, "
                    "approved_by = ?2, approved_at = ?3, allow_write = ?4, run_as_definer = ?5, "
                    "definer_role = ?6, approval_reason = ?7 WHERE id = ?1"));
    up.Bind(1, id);
    up.Bind(2, actor);
    up.Bind(3, options_.now_ms());
    up.Bind(4, int64_t{approval.allow_write});
    up.Bind(5, int64_t{approval.run_as_definer});
    up.Bind(6, approval.run_as_definer ? approval.definer_role : std::string());
    up.Bind(7, approval.reason);
    return Step(up, "code tool store write").status();
  });
}

Status SqliteCodeToolStore::Reject(const std::string& id, const std::string& actor, const std::string& reason) {
  if (actor.empty()) return InvalidArgument("rejecter: empty");
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetLocked(id));
    if (t.proposer == actor) return PermissionDenied(actor + " proposed " + id + " and cannot reject it");
    if (t.state != State::kProposed) {
      return FailedPrecondition(id + " is " + StateName(t.state) + "; only a proposed version can be rejected");
    }
    AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt up, db_.Prepare("UPDATE code_tools SET state = 'rejected', decided_by = ?2, "
                                                        "decided_at = ?3, reason = ?4 WHERE id = ?1"));
    up.Bind(1, id);
    up.Bind(2, actor);
    up.Bind(3, options_.now_ms());
    up.Bind(4, reason);
    return Step(up, "code tool store write").status();
  });
}

Status SqliteCodeToolStore::Revoke(const std::string& id, const std::string& actor, const std::string& reason) {
  if (actor.empty()) return InvalidArgument("revoker: empty");
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetLocked(id));
    if (t.state != State::kApproved) {
      return FailedPrecondition(id + " is " + StateName(t.state) + "; only an approved version can be revoked");
    }
    AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt up, db_.Prepare("UPDATE code_tools SET state = 'revoked', decided_by = ?2, "
                                                        "decided_at = ?3, reason = ?4 WHERE id = ?1"));
    up.Bind(1, id);
    up.Bind(2, actor);
    up.Bind(3, options_.now_ms());
    up.Bind(4, reason);
    return Step(up, "code tool store write").status();
  });
}

StatusOr<CodeTool> SqliteCodeToolStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  return GetLocked(id);
}

StatusOr<std::vector<CodeTool>> SqliteCodeToolStore::List(std::optional<State> state, const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  return Select("(?1 = '' OR state = ?1) AND (?2 = '' OR endpoint = ?2)",
                {state ? StateName(*state) : "", endpoint});
}

StatusOr<std::vector<CodeTool>> SqliteCodeToolStore::Active(const std::string& endpoint) {
  std::vector<CodeTool> rows;
  {
    std::lock_guard<std::mutex> lock(mu_);
    AIRLOCK_ASSIGN_OR_RETURN(rows, Select("state = 'approved' AND endpoint = ?1", {endpoint}));
  }
  // Newest first; one approved version per name is normal, but should a
  // database edit leave several, only the newest counts and it must be intact.
  std::stable_sort(rows.begin(), rows.end(), [](const CodeTool& a, const CodeTool& b) {
    return a.proposal.name != b.proposal.name ? a.proposal.name < b.proposal.name : a.version > b.version;
  });
  std::vector<CodeTool> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i].proposal.name == rows[i - 1].proposal.name) continue;
    if (rows[i].intact) out.push_back(std::move(rows[i]));
  }
  return out;
}

int64_t SqliteCodeToolStore::Generation() {
  std::lock_guard<std::mutex> lock(mu_);
  StatusOr<bool> row = data_version_.Step();
  const int64_t data_version = row.ok() && *row ? data_version_.ColumnInt64(0) : seen_data_version_;
  data_version_.Reset();
  if (data_version == seen_data_version_ && !dirty_) return counter_ + external_edits_;
  row = read_counter_.Step();
  if (row.ok() && *row) {
    const int64_t counter = read_counter_.ColumnInt64(0);
    // Another connection committed without going through a store.
    if (counter == counter_ && data_version != seen_data_version_ && seen_data_version_ != -1) {
      ++external_edits_;
    }
    counter_ = counter;
    seen_data_version_ = data_version;
    dirty_ = false;
  }
  read_counter_.Reset();
  return counter_ + external_edits_;
}

}  // namespace airlock::codetools
