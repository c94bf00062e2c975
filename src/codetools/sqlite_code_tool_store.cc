#include "codetools/sqlite_code_tool_store.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>

#include "base/unique_fd.h"
#include "codetools/code_tool_rows.h"

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

// The current row of a SELECT of kStoredToolColumns.
CodeTool ReadRow(const SqliteStmt& st) {
  int c = 0;
  bool types_ok = true;
  StoredTool s = ReadStoredColumns(
      [&] {
        const int col = c++;
        if (st.ColumnType(col) != SQLITE_TEXT) types_ok = false;
        return st.ColumnText(col);
      },
      [&] { return st.ColumnInt64(c++); });
  s.types_ok = types_ok;
  return FromStored(s);
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
  AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt st, db_.Prepare(std::string("SELECT ") + kStoredToolColumns +
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
  AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, NewVersion(p, proposer, endpoint));

  std::lock_guard<std::mutex> lock(mu_);
  t.proposed_at = options_.now_ms();
  AIRLOCK_RETURN_IF_ERROR(InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(
        std::vector<CodeTool> same,
        Select("endpoint = ?1 AND name = ?2 AND hash = ?3 AND state IN ('proposed', 'approved')",
               {endpoint, p.name, t.hash}));
    if (!same.empty()) return DuplicateVersion(same[0]);
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
    ins.Bind(i++, DumpJson(t.proposal.input_schema));
    ins.Bind(i++, DumpJson(t.proposal.connectors));
    ins.Bind(i++, DumpJson(t.proposal.tools));
    ins.Bind(i++, DumpJson(t.proposal.limits));
    ins.Bind(i++, t.hash);
    ins.Bind(i++, proposer);
    ins.Bind(i++, t.proposed_at);
    return Step(ins, "code tool store write").status();
  }));
  return t;
}

Status SqliteCodeToolStore::Approve(const std::string& id, const std::string& actor, const Approval& approval) {
  AIRLOCK_RETURN_IF_ERROR(CheckApproval(actor, approval));
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetLocked(id));
    AIRLOCK_RETURN_IF_ERROR(CheckApprove(t, actor));
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
  AIRLOCK_RETURN_IF_ERROR(CheckActor(actor, "rejecter"));
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetLocked(id));
    AIRLOCK_RETURN_IF_ERROR(CheckReject(t, actor));
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
  AIRLOCK_RETURN_IF_ERROR(CheckActor(actor, "revoker"));
  std::lock_guard<std::mutex> lock(mu_);
  return InTransaction([&]() -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetLocked(id));
    AIRLOCK_RETURN_IF_ERROR(CheckRevoke(t));
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
  return NewestIntactPerName(std::move(rows));
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
