#include "db/sqlite_db.h"

namespace airlock::audit {

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(o.stmt_, nullptr);
    db_ = std::exchange(o.db_, nullptr);
  }
  return *this;
}

void SqliteStmt::Bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }

void SqliteStmt::Bind(int index, std::string_view text) {
  sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

StatusOr<bool> SqliteStmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Unavailable(std::string("sqlite step: ") + sqlite3_errmsg(db_));
}

void SqliteStmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int SqliteStmt::ColumnType(int col) const { return sqlite3_column_type(stmt_, col); }

int64_t SqliteStmt::ColumnInt64(int col) const { return sqlite3_column_int64(stmt_, col); }

std::string SqliteStmt::ColumnText(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), n) : std::string();
}

StatusOr<SqliteDb> SqliteDb::Open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  SqliteDb owner(db);  // closes db on every path, even a failed open
  if (rc != SQLITE_OK) {
    return Unavailable("sqlite open " + path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(db, 1);
  return owner;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

SqliteDb& SqliteDb::operator=(SqliteDb&& o) noexcept {
  if (this != &o) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(o.db_, nullptr);
  }
  return *this;
}

Status SqliteDb::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Error("sqlite exec");
  return OkStatus();
}

StatusOr<SqliteStmt> SqliteDb::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    return Error("sqlite prepare");
  }
  return SqliteStmt(stmt, db_);
}

Status SqliteDb::Error(const std::string& what) const {
  return Unavailable(what + ": " + (db_ ? sqlite3_errmsg(db_) : "no connection"));
}

}  // namespace airlock::audit
