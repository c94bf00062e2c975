#include "audit/sqlite_audit_store.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <type_traits>

#include "audit/audit_chain.h"
#include "base/unique_fd.h"

namespace airlock::audit {
namespace {

using Value = SqliteAuditStore::Value;
static_assert(std::is_same_v<Value, AuditValue>);

}  // namespace

// Everything the store needs to know about one table. SQL fragments are
// constants; values are always bound.
struct SqliteAuditStore::Table {
  const ChainTable& chain;  // columns, kind, hashing (audit_chain.h)
  const char* user_filter;  // uses ?2
  const char* run_filter;   // uses ?3
  const char* run_fields_filter;  // uses ?6 endpoint, ?7 language, ?8 status
  size_t index() const { return chain.index; }
  const char* kind() const { return chain.kind; }
  const char* sql_name() const { return chain.sql_name; }
  const std::vector<std::pair<const char*, bool>>& columns() const { return chain.columns; }
};

namespace {

using Table = SqliteAuditStore::Table;

const std::vector<Table>& Tables() {
  static const std::vector<Table> t = {
      {RunsTable(), "(?2 = '' OR user = ?2)", "(?3 = '' OR run_id = ?3)",
       "(?6 = '' OR endpoint = ?6) AND (?7 = '' OR language = ?7) AND (?8 = '' OR status = ?8)"},
      {CallsTable(), "(?2 = '' OR run_id IN (SELECT run_id FROM audit_runs WHERE user = ?2))",
       "(?3 = '' OR run_id = ?3)",
       "((?6 = '' AND ?7 = '' AND ?8 = '') OR run_id IN (SELECT run_id FROM audit_runs WHERE "
       "(?6 = '' OR endpoint = ?6) AND (?7 = '' OR language = ?7) AND (?8 = '' OR status = ?8)))"},
      {EventsTable(), "(?2 = '' OR actor = ?2)", "(?3 = '' OR target = ?3)", "(?6 = '' AND ?7 = '' AND ?8 = '')"},
  };
  return t;
}

std::string ColumnList(const Table& t) {
  std::string s = "id, recorded_at";
  for (const auto& [name, is_int] : t.columns()) s += std::string(", ") + name;
  return s;
}

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Reads columns [first, first + n) of the current row as `t`'s values; false
// if one has the wrong storage class.
bool ReadValues(const SqliteStmt& st, const Table& t, int first, std::vector<Value>* out) {
  bool types_ok = true;
  out->clear();
  for (size_t i = 0; i < t.columns().size(); ++i) {
    const int col = first + static_cast<int>(i);
    const bool is_int = t.columns()[i].second;
    if (st.ColumnType(col) != (is_int ? SQLITE_INTEGER : SQLITE_TEXT)) types_ok = false;
    if (is_int) {
      out->emplace_back(st.ColumnInt64(col));
    } else {
      out->emplace_back(st.ColumnText(col));
    }
  }
  return types_ok;
}

Status CreateFile0600(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return ErrnoError("open " + path);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError("fstat " + path);
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a regular file");
  if ((st.st_mode & 07777) != 0600 && fchmod(fd.get(), 0600) != 0) {
    return ErrnoError("fchmod " + path);
  }
  return OkStatus();
}

}  // namespace

SqliteAuditStore::SqliteAuditStore(SqliteDb db, Options options)
    : options_(std::move(options)), db_(std::move(db)) {
  if (!options_.now_ms) options_.now_ms = SystemNowMs;
}

StatusOr<std::unique_ptr<SqliteAuditStore>> SqliteAuditStore::Open(const std::string& path,
                                                                   Options options) {
  AIRLOCK_RETURN_IF_ERROR(CreateFile0600(path));
  AIRLOCK_ASSIGN_OR_RETURN(SqliteDb db,
                           SqliteDb::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX));
  sqlite3_busy_timeout(db.get(), 5000);
  {
    AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt wal, db.Prepare("PRAGMA journal_mode=WAL"));
    AIRLOCK_ASSIGN_OR_RETURN(bool row, wal.Step());
    if (!row || wal.ColumnText(0) != "wal") {
      return Unavailable("audit store " + path + ": cannot switch to WAL mode");
    }
  }
  AIRLOCK_RETURN_IF_ERROR(
      db.Exec(options.sync_every_record ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  AIRLOCK_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  for (const Table& t : Tables()) {
    std::string sql = std::string("CREATE TABLE IF NOT EXISTS ") + t.sql_name() +
                      " (id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL";
    for (const auto& [name, is_int] : t.columns()) {
      sql += std::string(", ") + name + (is_int ? " INTEGER NOT NULL" : " TEXT NOT NULL");
    }
    sql += ", prev_hash TEXT NOT NULL, row_hash TEXT NOT NULL) STRICT";
    Status st = db.Exec(sql.c_str());
    if (!st.ok()) {
      (void)db.Exec("ROLLBACK");
      return st;
    }
  }
  const std::string head =
      "CREATE TABLE IF NOT EXISTS audit_head (singleton INTEGER PRIMARY KEY CHECK (singleton = 1),"
      " last_id INTEGER NOT NULL, last_hash TEXT NOT NULL) STRICT;"
      "INSERT OR IGNORE INTO audit_head VALUES (1, 0, '" + GenesisHash() + "');"
      "CREATE INDEX IF NOT EXISTS audit_runs_run_id ON audit_runs (run_id);"
      "CREATE INDEX IF NOT EXISTS audit_runs_user ON audit_runs (user);"
      "CREATE INDEX IF NOT EXISTS audit_calls_run_id ON audit_calls (run_id);"
      "COMMIT";
  if (Status st = db.Exec(head.c_str()); !st.ok()) {
    (void)db.Exec("ROLLBACK");
    return st;
  }
  std::unique_ptr<SqliteAuditStore> store(new SqliteAuditStore(std::move(db), std::move(options)));
  AIRLOCK_RETURN_IF_ERROR(store->Prepare());
  return store;
}

namespace {

// A file: URI for `path` (for SQLite's ?immutable=1).
std::string FileUri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char kHex[] = "0123456789abcdef";
      uri += '%';
      uri += kHex[(static_cast<unsigned char>(c) >> 4) & 15];
      uri += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      uri += c;
    }
  }
  return uri;
}

// True if `db` can read the chain head (the schema is there and readable).
bool HeadReadable(SqliteDb& db) {
  StatusOr<SqliteStmt> head = db.Prepare("SELECT last_id FROM audit_head WHERE singleton = 1");
  if (!head.ok()) return false;
  StatusOr<bool> row = head->Step();
  return row.ok();
}

}  // namespace

StatusOr<std::unique_ptr<SqliteAuditStore>> SqliteAuditStore::OpenReadOnly(const std::string& path) {
  AIRLOCK_ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX));
  sqlite3_busy_timeout(db.get(), 5000);
  if (!HeadReadable(db)) {
    AIRLOCK_ASSIGN_OR_RETURN(db, SqliteDb::Open(FileUri(path) + "?immutable=1",
                                                SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI));
    if (!HeadReadable(db)) {
      return Unavailable("audit store " + path + ": cannot read it (not an airlock audit log, or no permission)");
    }
  }
  std::unique_ptr<SqliteAuditStore> store(new SqliteAuditStore(std::move(db), Options()));
  AIRLOCK_RETURN_IF_ERROR(store->Prepare());
  return store;
}

Status SqliteAuditStore::Prepare() {
  AIRLOCK_ASSIGN_OR_RETURN(begin_, db_.Prepare("BEGIN IMMEDIATE"));
  AIRLOCK_ASSIGN_OR_RETURN(commit_, db_.Prepare("COMMIT"));
  AIRLOCK_ASSIGN_OR_RETURN(rollback_, db_.Prepare("ROLLBACK"));
  AIRLOCK_ASSIGN_OR_RETURN(read_head_,
                           db_.Prepare("SELECT last_id, last_hash FROM audit_head WHERE singleton = 1"));
  AIRLOCK_ASSIGN_OR_RETURN(
      write_head_, db_.Prepare("UPDATE audit_head SET last_id = ?1, last_hash = ?2 WHERE singleton = 1"));
  for (const Table& t : Tables()) {
    std::string params;
    const size_t n = t.columns().size() + 4;  // id, recorded_at, columns, prev_hash, row_hash
    for (size_t i = 1; i <= n; ++i) params += (i > 1 ? ", ?" : "?") + std::to_string(i);
    AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt ins,
                             db_.Prepare(std::string("INSERT INTO ") + t.sql_name() + " (" +
                                         ColumnList(t) + ", prev_hash, row_hash) VALUES (" +
                                         params + ")"));
    insert_.push_back(std::move(ins));
    AIRLOCK_ASSIGN_OR_RETURN(
        SqliteStmt q,
        db_.Prepare(std::string("SELECT ") + ColumnList(t) + " FROM " + t.sql_name() +
                    " WHERE recorded_at >= ?1 AND (?5 = 0 OR recorded_at < ?5) AND " + t.user_filter +
                    " AND " + t.run_filter + " AND " + t.run_fields_filter + " ORDER BY id DESC LIMIT ?4"));
    query_.push_back(std::move(q));
  }
  return OkStatus();
}

Status SqliteAuditStore::AppendRun(const RunRecord& run) { return Append(Tables()[0], ValuesOf(run)); }

Status SqliteAuditStore::AppendCall(const CallRow& call) { return Append(Tables()[1], ValuesOf(call)); }

Status SqliteAuditStore::AppendEvent(const EventRow& event) { return Append(Tables()[2], ValuesOf(event)); }

Status SqliteAuditStore::AppendRunWithCalls(const RunRecord& run, const std::vector<CallRow>& calls) {
  std::vector<std::pair<const Table*, std::vector<Value>>> rows;
  rows.reserve(calls.size() + 1);
  for (const CallRow& call : calls) rows.emplace_back(&Tables()[1], ValuesOf(call));
  rows.emplace_back(&Tables()[0], ValuesOf(run));
  return AppendAll(std::move(rows));
}

Status SqliteAuditStore::Append(const Table& table, std::vector<Value> values) {
  std::vector<std::pair<const Table*, std::vector<Value>>> rows;
  rows.emplace_back(&table, std::move(values));
  return AppendAll(std::move(rows));
}

Status SqliteAuditStore::AppendAll(std::vector<std::pair<const Table*, std::vector<Value>>> rows) {
  std::lock_guard<std::mutex> lock(mu_);
  StatusOr<bool> begun = begin_.Step();
  begin_.Reset();
  if (!begun.ok()) return begun.status().WithContext("audit append");
  Status st = OkStatus();
  for (auto& [table, values] : rows) {
    st = AppendLocked(*table, values);
    if (!st.ok()) break;
  }
  if (st.ok()) {
    StatusOr<bool> done = commit_.Step();
    commit_.Reset();
    if (done.ok()) return OkStatus();
    st = done.status();
  }
  (void)rollback_.Step();
  rollback_.Reset();
  return st.WithContext("audit append");
}

Status SqliteAuditStore::AppendLocked(const Table& table, std::vector<Value>& values) {
  AIRLOCK_ASSIGN_OR_RETURN(bool has_head, read_head_.Step());
  if (!has_head) {
    read_head_.Reset();
    return Internal("audit_head row is missing");
  }
  const int64_t id = read_head_.ColumnInt64(0) + 1;
  const std::string prev_hash = read_head_.ColumnText(1);
  read_head_.Reset();
  const int64_t recorded_at = options_.now_ms();
  std::optional<std::string> canonical = CanonicalRow(table.chain, id, recorded_at, values);
  if (!canonical) return Internal("audit row cannot be serialized");
  const std::string row_hash = ChainHash(prev_hash, *canonical);

  SqliteStmt& ins = insert_[table.index()];
  int p = 1;
  ins.Bind(p++, id);
  ins.Bind(p++, recorded_at);
  for (const Value& v : values) std::visit([&](const auto& x) { ins.Bind(p++, x); }, v);
  ins.Bind(p++, prev_hash);
  ins.Bind(p++, row_hash);
  StatusOr<bool> inserted = ins.Step();
  ins.Reset();
  if (!inserted.ok()) return inserted.status();

  write_head_.Bind(1, id);
  write_head_.Bind(2, row_hash);
  StatusOr<bool> updated = write_head_.Step();
  write_head_.Reset();
  return updated.status();
}

StatusOr<std::vector<AuditRow>> SqliteAuditStore::Query(const AuditQuery& query) {
  if (query.limit <= 0) return InvalidArgument("audit query: limit must be > 0");
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<AuditRow> rows;
  std::vector<Value> values;
  static constexpr const char* kTypeOf[] = {"run", "call", "event"};
  if (!query.type.empty() && query.type != "run" && query.type != "call" && query.type != "event") {
    return InvalidArgument("audit query: type must be run, call or event");
  }
  for (const Table& t : Tables()) {
    if (!query.type.empty() && query.type != kTypeOf[t.index()]) continue;
    SqliteStmt& q = query_[t.index()];
    q.Bind(1, query.since);
    q.Bind(2, query.user);
    q.Bind(3, query.run_id);
    q.Bind(4, query.limit);
    q.Bind(5, query.until);
    q.Bind(6, query.endpoint);
    q.Bind(7, query.language);
    q.Bind(8, query.status);
    while (true) {
      StatusOr<bool> row = q.Step();
      if (!row.ok()) {
        q.Reset();
        return row.status().WithContext("audit query");
      }
      if (!*row) break;
      ReadValues(q, t, 2, &values);
      rows.push_back(AuditRow{q.ColumnInt64(0), q.ColumnInt64(1), RowFromValues(t.chain, values)});
    }
    q.Reset();
  }
  std::sort(rows.begin(), rows.end(), [](const AuditRow& a, const AuditRow& b) { return a.id < b.id; });
  if (rows.size() > static_cast<size_t>(query.limit)) {
    rows.erase(rows.begin(), rows.end() - query.limit);
  }
  return rows;
}

StatusOr<VerifyReport> SqliteAuditStore::Verify() {
  std::lock_guard<std::mutex> lock(mu_);
  AIRLOCK_RETURN_IF_ERROR(db_.Exec("BEGIN"));  // one consistent snapshot
  struct Cursor {
    const Table* table;
    SqliteStmt st;
    bool has = false;
  };
  auto verify = [&]() -> StatusOr<VerifyReport> {
    std::vector<Cursor> cursors;
    for (const Table& t : Tables()) {
      AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt st,
                               db_.Prepare(std::string("SELECT ") + ColumnList(t) +
                                           ", prev_hash, row_hash FROM " + t.sql_name() + " ORDER BY id"));
      cursors.push_back(Cursor{&t, std::move(st)});
      AIRLOCK_ASSIGN_OR_RETURN(cursors.back().has, cursors.back().st.Step());
    }
    ChainVerifier verifier;
    std::vector<Value> values;
    while (true) {
      Cursor* c = nullptr;
      for (Cursor& k : cursors) {
        if (k.has && (!c || k.st.ColumnInt64(0) < c->st.ColumnInt64(0))) c = &k;
      }
      if (!c) break;
      const Table& t = *c->table;
      const int ncol = static_cast<int>(t.columns().size());
      const bool types_ok = ReadValues(c->st, t, 2, &values) && c->st.ColumnType(1) == SQLITE_INTEGER;
      if (!verifier.Add(t.chain, c->st.ColumnInt64(0), c->st.ColumnInt64(1), values, types_ok,
                        c->st.ColumnText(2 + ncol), c->st.ColumnText(3 + ncol))) {
        break;
      }
      AIRLOCK_ASSIGN_OR_RETURN(c->has, c->st.Step());
    }
    AIRLOCK_ASSIGN_OR_RETURN(bool has_head, read_head_.Step());
    const int64_t head_id = has_head ? read_head_.ColumnInt64(0) : -1;
    const std::string head_hash = has_head ? read_head_.ColumnText(1) : "";
    read_head_.Reset();
    return verifier.Finish(has_head, head_id, head_hash);
  };
  StatusOr<VerifyReport> report = verify();
  read_head_.Reset();
  (void)db_.Exec("COMMIT");
  return report;
}

}  // namespace airlock::audit
