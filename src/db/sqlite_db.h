// Move-only owners of a SQLite connection (SqliteDb) and a prepared statement
// (SqliteStmt), with errors as Status. Values only ever reach SQL through
// Bind(); SQL text is always a constant.
//
//   AIRLOCK_ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(path, SQLITE_OPEN_READWRITE));
//   AIRLOCK_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode=WAL"));
//   AIRLOCK_ASSIGN_OR_RETURN(SqliteStmt st, db.Prepare("SELECT v FROM t WHERE k = ?1"));
//   st.Bind(1, "key");
//   AIRLOCK_ASSIGN_OR_RETURN(bool row, st.Step());
//   if (row) std::string v = st.ColumnText(0);
//   st.Reset();                       // ready to bind and step again
//
// Statements must not outlive their connection (declare the SqliteDb first).
#ifndef AIRLOCK_DB_SQLITE_DB_H_
#define AIRLOCK_DB_SQLITE_DB_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace airlock::audit {

class SqliteStmt {
 public:
  SqliteStmt() = default;
  SqliteStmt(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  ~SqliteStmt();
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;
  SqliteStmt(SqliteStmt&& o) noexcept
      : stmt_(std::exchange(o.stmt_, nullptr)), db_(std::exchange(o.db_, nullptr)) {}
  SqliteStmt& operator=(SqliteStmt&& o) noexcept;

  // Parameter indexes start at 1. Errors surface at Step().
  void Bind(int index, int64_t value);
  void Bind(int index, std::string_view text);  // copied by SQLite
  // True if a row is ready, false when done.
  StatusOr<bool> Step();
  // Ready to step again; clears the bindings.
  void Reset();

  int ColumnType(int col) const;  // SQLITE_INTEGER, SQLITE_TEXT, ...
  int64_t ColumnInt64(int col) const;
  std::string ColumnText(int col) const;  // may hold NUL bytes

  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
};

class SqliteDb {
 public:
  // `flags` as for sqlite3_open_v2 (SQLITE_OPEN_READWRITE, ...).
  static StatusOr<SqliteDb> Open(const std::string& path, int flags);

  SqliteDb() = default;
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  SqliteDb(SqliteDb&& o) noexcept : db_(std::exchange(o.db_, nullptr)) {}
  SqliteDb& operator=(SqliteDb&& o) noexcept;

  // Runs constant SQL (no values: use Prepare + Bind for those).
  Status Exec(const char* sql);
  StatusOr<SqliteStmt> Prepare(std::string_view sql);
  // "what: <sqlite error message>" as kUnavailable (the store cannot be used).
  Status Error(const std::string& what) const;

  sqlite3* get() const { return db_; }

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace airlock::audit

#endif  // AIRLOCK_DB_SQLITE_DB_H_
