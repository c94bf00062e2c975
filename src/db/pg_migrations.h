// The versioned schema of airlock's PostgreSQL database (docs/state.md#schema).
//
// One sequence of migrations, 1, 2, 3, ..., for all of airlock's tables (the
// audit log, the code tools, the API keys). The table
//   airlock_schema_migrations (version, name, applied_at)
// lists those applied. MigratePg() applies the missing ones, each once, in
// its own transaction, oldest first; it holds the session-level advisory
// lock kPgMigrationLock meanwhile, so gateways that start together apply
// each migration once between them (the others wait, then find it done).
// A database that has a migration this binary does not know (a newer
// airlock migrated it), or a known version under another name, is refused:
// FailedPrecondition, naming both versions. A released migration is never
// edited; a change is a new migration.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, PgDatabase::Connect(dsn));
//   AIRLOCK_RETURN_IF_ERROR(MigratePg(*db));          // every store's Open does this
//   AIRLOCK_RETURN_IF_ERROR(CheckPgSchema(*db, kPgSchemaAuditLog));  // readers: no DDL
//
// The tables are created unqualified, in the first schema of the
// connection's search_path (public, or e.g. "options=-csearch_path=airlock"
// in the DSN).
#ifndef AIRLOCK_DB_PG_MIGRATIONS_H_
#define AIRLOCK_DB_PG_MIGRATIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "db/pg_database.h"

namespace airlock::state {

struct PgMigration {
  int version;       // 1, 2, 3, ... without gaps
  const char* name;  // recorded with it; must not change once released
  const char* sql;   // one or more statements
};

// The versions that bring in each store's tables.
constexpr int kPgSchemaAuditLog = 1;
constexpr int kPgSchemaCodeTools = 2;
constexpr int kPgSchemaApiKeys = 3;
constexpr int kPgSchemaTasks = 4;  // MCP tasks (tasks/pg_task_store.h)
constexpr int kPgSchemaCodeSessions = 5;  // the session book (sessions/pg_session_book.h)
constexpr int kPgSchemaCodeSessionMode = 6;  // code_sessions.mode ("" or "codemode")

// pg_advisory_lock key held while migrating ("airlock" + 0x01).
constexpr int64_t kPgMigrationLock = 0x6169726c6f636b01;

// airlock's migrations, oldest first.
const std::vector<PgMigration>& PgMigrations();

// Applies the migrations `db` lacks (see above). OK if it is up to date.
Status MigratePg(PgDatabase& db);
// The same with another list (tests).
Status MigratePg(PgDatabase& db, const std::vector<PgMigration>& migrations);

// The highest version applied; 0 if there is no migrations table.
StatusOr<int> PgSchemaVersion(PgDatabase& db);

// For readers that must not change the database (`airlock audit`): OK if
// the schema has at least version `needed` and none newer than this binary
// knows; NotFound if it has no airlock schema (or not that far).
Status CheckPgSchema(PgDatabase& db, int needed);

}  // namespace airlock::state

#endif  // AIRLOCK_DB_PG_MIGRATIONS_H_
