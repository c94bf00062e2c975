#include "audit/pg_audit_store.h"

#include <algorithm>
#include <deque>
#include <limits>

#include "db/pg_migrations.h"

namespace airlock::audit {
namespace {

using state::PgDatabase;

constexpr int64_t kVerifyBatch = 1000;

std::string Quoted(const char* name) { return std::string("\"") + name + "\""; }

// "id", "recorded_at", the table's columns (quoted: "user" is a keyword).
std::string ColumnList(const ChainTable& t) {
  std::string s = "id, recorded_at";
  for (const auto& [name, is_int] : t.columns) s += ", " + Quoted(name);
  return s;
}

std::string InsertSql(const ChainTable& t) {
  std::string sql = std::string("INSERT INTO ") + t.sql_name + " (" + ColumnList(t) + ", prev_hash, row_hash) VALUES (";
  const size_t n = t.columns.size() + 4;
  for (size_t i = 1; i <= n; ++i) sql += (i > 1 ? ", $" : "$") + std::to_string(i);
  return sql + ")";
}

// The filters of Query(), per table: $1 since, $2 user, $3 run_id, $4 limit,
// $5 until, $6 endpoint, $7 language, $8 status.
std::string QuerySql(const ChainTable& t) {
  static const std::string kRunFields =
      "($6::text = '' OR endpoint = $6::text) AND ($7::text = '' OR language = $7::text) AND "
      "($8::text = '' OR status = $8::text)";
  std::string user, run, fields;
  switch (t.index) {
    case 0:
      user = "($2::text = '' OR \"user\" = $2::text)";
      run = "($3::text = '' OR run_id = $3::text)";
      fields = kRunFields;
      break;
    case 1:
      user = "($2::text = '' OR run_id IN (SELECT run_id FROM audit_runs WHERE \"user\" = $2::text))";
      run = "($3::text = '' OR run_id = $3::text)";
      fields = "(($6::text = '' AND $7::text = '' AND $8::text = '') OR run_id IN (SELECT run_id FROM audit_runs WHERE " +
               kRunFields + "))";
      break;
    default:
      user = "($2::text = '' OR actor = $2::text)";
      run = "($3::text = '' OR target = $3::text)";
      fields = "($6::text = '' AND $7::text = '' AND $8::text = '')";
      break;
  }
  return "SELECT " + ColumnList(t) + " FROM " + t.sql_name +
         " WHERE recorded_at >= $1::bigint AND ($5::bigint = 0 OR recorded_at < $5::bigint) AND " + user + " AND " +
         run + " AND " + fields + " ORDER BY id DESC LIMIT $4::bigint";
}

// Columns [first, first + n) of `row` as `t`'s values.
std::vector<AuditValue> ReadValues(const pqxx::row& row, const ChainTable& t, int first) {
  std::vector<AuditValue> out;
  out.reserve(t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const pqxx::field f = row[static_cast<pqxx::row::size_type>(first + static_cast<int>(i))];
    if (t.columns[i].second) {
      out.emplace_back(f.as<int64_t>());
    } else {
      out.emplace_back(f.as<std::string>());
    }
  }
  return out;
}

// PostgreSQL text cannot hold NUL: stored (and hashed) as U+FFFD.
void ReplaceNuls(std::vector<AuditValue>& values) {
  for (AuditValue& v : values) {
    std::string* s = std::get_if<std::string>(&v);
    if (s == nullptr || !state::HasNul(*s)) continue;
    std::string out;
    for (char c : *s) {
      if (c == '\0') {
        out += "\xEF\xBF\xBD";
      } else {
        out += c;
      }
    }
    *s = std::move(out);
  }
}

std::string AsParam(const AuditValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

// One stored row, as Verify() reads it.
struct StoredRow {
  int64_t id = 0, recorded_at = 0;
  std::vector<AuditValue> values;
  std::string prev_hash, row_hash;
};

// A table's rows in id order, fetched kVerifyBatch at a time.
struct Cursor {
  const ChainTable* table = nullptr;
  std::deque<StoredRow> rows;
  int64_t after = std::numeric_limits<int64_t>::min();
  bool done = false;

  void Fill(pqxx::transaction_base& tx) {
    if (!rows.empty() || done) return;
    const int ncol = static_cast<int>(table->columns.size());
    pqxx::result r = tx.exec_params(std::string("SELECT ") + ColumnList(*table) + ", prev_hash, row_hash FROM " +
                                        table->sql_name + " WHERE id > $1::bigint ORDER BY id LIMIT $2::bigint",
                                    after, kVerifyBatch);
    for (const pqxx::row& row : r) {
      StoredRow s;
      s.id = row[0].as<int64_t>();
      s.recorded_at = row[1].as<int64_t>();
      s.values = ReadValues(row, *table, 2);
      s.prev_hash = row[2 + ncol].as<std::string>();
      s.row_hash = row[3 + ncol].as<std::string>();
      after = s.id;
      rows.push_back(std::move(s));
    }
    done = static_cast<int64_t>(r.size()) < kVerifyBatch;
  }
};

}  // namespace

PgAuditStore::PgAuditStore(std::shared_ptr<PgDatabase> db, Options options)
    : db_(std::move(db)), options_(std::move(options)) {}

StatusOr<std::unique_ptr<PgAuditStore>> PgAuditStore::Open(std::shared_ptr<PgDatabase> db, Options options) {
  if (db == nullptr) return InvalidArgument("audit store: no database");
  AIRLOCK_RETURN_IF_ERROR(state::MigratePg(*db));
  return std::unique_ptr<PgAuditStore>(new PgAuditStore(std::move(db), std::move(options)));
}

StatusOr<std::unique_ptr<PgAuditStore>> PgAuditStore::OpenExisting(std::shared_ptr<PgDatabase> db) {
  if (db == nullptr) return InvalidArgument("audit store: no database");
  Status st = state::CheckPgSchema(*db, state::kPgSchemaAuditLog);
  if (st.code() == StatusCode::kNotFound) return NotFound("no audit log in " + st.message());
  AIRLOCK_RETURN_IF_ERROR(st);
  return std::unique_ptr<PgAuditStore>(new PgAuditStore(std::move(db), Options()));
}

Status PgAuditStore::AppendRun(const RunRecord& run) {
  std::vector<Pending> rows;
  rows.emplace_back(&RunsTable(), ValuesOf(run));
  return AppendAll(std::move(rows));
}

Status PgAuditStore::AppendCall(const CallRow& call) {
  std::vector<Pending> rows;
  rows.emplace_back(&CallsTable(), ValuesOf(call));
  return AppendAll(std::move(rows));
}

Status PgAuditStore::AppendEvent(const EventRow& event) {
  std::vector<Pending> rows;
  rows.emplace_back(&EventsTable(), ValuesOf(event));
  return AppendAll(std::move(rows));
}

Status PgAuditStore::AppendRunWithCalls(const RunRecord& run, const std::vector<CallRow>& calls) {
  std::vector<Pending> rows;
  rows.reserve(calls.size() + 1);
  for (const CallRow& call : calls) rows.emplace_back(&CallsTable(), ValuesOf(call));
  rows.emplace_back(&RunsTable(), ValuesOf(run));
  return AppendAll(std::move(rows));
}

Status PgAuditStore::AppendAll(std::vector<Pending> rows) {
  for (Pending& p : rows) ReplaceNuls(p.second);
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    // The chain lock: every appender, on every gateway, queues here.
    pqxx::result head = tx.exec("SELECT last_id, last_hash FROM audit_head WHERE singleton = 1 FOR UPDATE");
    if (head.empty()) return Internal("audit_head row is missing");
    int64_t id = head[0][0].as<int64_t>();
    std::string prev_hash = head[0][1].as<std::string>();
    int64_t db_now = 0;
    if (!options_.now_ms) {
      db_now = tx.exec1("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")[0].as<int64_t>();
    }
    for (const auto& [table, values] : rows) {
      ++id;
      const int64_t recorded_at = options_.now_ms ? options_.now_ms() : db_now;
      std::optional<std::string> canonical = CanonicalRow(*table, id, recorded_at, values);
      if (!canonical) return Internal("audit row cannot be serialized");
      const std::string row_hash = ChainHash(prev_hash, *canonical);
      std::vector<std::string> params;
      params.reserve(values.size() + 4);
      params.push_back(std::to_string(id));
      params.push_back(std::to_string(recorded_at));
      for (const AuditValue& v : values) params.push_back(AsParam(v));
      params.push_back(prev_hash);
      params.push_back(row_hash);
      tx.exec_params(InsertSql(*table), pqxx::prepare::make_dynamic_params(params));
      prev_hash = row_hash;
    }
    tx.exec_params("UPDATE audit_head SET last_id = $1::bigint, last_hash = $2::text WHERE singleton = 1", id,
                   prev_hash);
    return OkStatus();
  });
  return st.WithContext("audit append");
}

StatusOr<std::vector<AuditRow>> PgAuditStore::Query(const AuditQuery& query) {
  if (query.limit <= 0) return InvalidArgument("audit query: limit must be > 0");
  if (!query.type.empty() && query.type != "run" && query.type != "call" && query.type != "event") {
    return InvalidArgument("audit query: type must be run, call or event");
  }
  for (const std::string* s : {&query.user, &query.run_id, &query.endpoint, &query.language, &query.status}) {
    if (state::HasNul(*s)) return std::vector<AuditRow>{};  // no stored text holds one
  }
  static constexpr const char* kTypeOf[] = {"run", "call", "event"};
  std::vector<AuditRow> rows;
  Status st = db_->Snapshot([&](pqxx::transaction_base& tx) -> Status {
    rows.clear();
    for (const ChainTable& t : ChainTables()) {
      if (!query.type.empty() && query.type != kTypeOf[t.index]) continue;
      pqxx::result r = tx.exec_params(QuerySql(t), query.since, query.user, query.run_id, query.limit, query.until,
                                      query.endpoint, query.language, query.status);
      for (const pqxx::row& row : r) {
        rows.push_back(AuditRow{row[0].as<int64_t>(), row[1].as<int64_t>(), RowFromValues(t, ReadValues(row, t, 2))});
      }
    }
    return OkStatus();
  });
  if (!st.ok()) return st.WithContext("audit query");
  std::sort(rows.begin(), rows.end(), [](const AuditRow& a, const AuditRow& b) { return a.id < b.id; });
  if (rows.size() > static_cast<size_t>(query.limit)) rows.erase(rows.begin(), rows.end() - query.limit);
  return rows;
}

StatusOr<VerifyReport> PgAuditStore::Verify() {
  VerifyReport report;
  Status st = db_->Snapshot([&](pqxx::transaction_base& tx) -> Status {
    std::vector<Cursor> cursors;
    for (const ChainTable& t : ChainTables()) {
      cursors.emplace_back();
      cursors.back().table = &t;
    }
    ChainVerifier verifier;
    while (true) {
      Cursor* c = nullptr;
      for (Cursor& k : cursors) {
        k.Fill(tx);
        if (!k.rows.empty() && (c == nullptr || k.rows.front().id < c->rows.front().id)) c = &k;
      }
      if (c == nullptr) break;
      const StoredRow& row = c->rows.front();
      if (!verifier.Add(*c->table, row.id, row.recorded_at, row.values, /*types_ok=*/true, row.prev_hash,
                        row.row_hash)) {
        break;
      }
      c->rows.pop_front();
    }
    pqxx::result head = tx.exec("SELECT last_id, last_hash FROM audit_head WHERE singleton = 1");
    report = head.empty() ? verifier.Finish(false, 0, "")
                          : verifier.Finish(true, head[0][0].as<int64_t>(), head[0][1].as<std::string>());
    return OkStatus();
  });
  if (!st.ok()) return st.WithContext("audit verify");
  return report;
}

}  // namespace airlock::audit
