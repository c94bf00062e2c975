#include "db/pg_migrations.h"

#include <map>
#include <utility>

namespace airlock::state {
namespace {

// Version 1: the audit log. One hash chain over three tables (see
// audit/audit_chain.h); audit_head holds the chain's last id and hash, and
// its row is the lock every append takes (SELECT ... FOR UPDATE).
constexpr char kAuditLog[] = R"sql(
CREATE TABLE audit_runs (
  id BIGINT PRIMARY KEY, recorded_at BIGINT NOT NULL,
  run_id TEXT NOT NULL, started_at BIGINT NOT NULL, ended_at BIGINT NOT NULL, duration_ms BIGINT NOT NULL,
  "user" TEXT NOT NULL, role TEXT NOT NULL, endpoint TEXT NOT NULL, client TEXT NOT NULL, kind TEXT NOT NULL,
  tool_version_hash TEXT NOT NULL, language TEXT NOT NULL, code_sha256 TEXT NOT NULL, code TEXT NOT NULL,
  connectors TEXT NOT NULL, limits TEXT NOT NULL, status TEXT NOT NULL, error_code TEXT NOT NULL,
  calls_total BIGINT NOT NULL, calls_denied BIGINT NOT NULL, console_bytes BIGINT NOT NULL,
  result_bytes BIGINT NOT NULL,
  prev_hash TEXT NOT NULL, row_hash TEXT NOT NULL);
CREATE TABLE audit_calls (
  id BIGINT PRIMARY KEY, recorded_at BIGINT NOT NULL,
  run_id TEXT NOT NULL, seq BIGINT NOT NULL, connector TEXT NOT NULL, tool TEXT NOT NULL,
  effective_class TEXT NOT NULL, decision TEXT NOT NULL, reason TEXT NOT NULL, args_sha256 TEXT NOT NULL,
  args_redacted TEXT NOT NULL, result_status TEXT NOT NULL, result_bytes BIGINT NOT NULL,
  duration_ms BIGINT NOT NULL,
  prev_hash TEXT NOT NULL, row_hash TEXT NOT NULL);
CREATE TABLE audit_events (
  id BIGINT PRIMARY KEY, recorded_at BIGINT NOT NULL,
  at BIGINT NOT NULL, kind TEXT NOT NULL, actor TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL,
  prev_hash TEXT NOT NULL, row_hash TEXT NOT NULL);
CREATE TABLE audit_head (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  last_id BIGINT NOT NULL, last_hash TEXT NOT NULL);
INSERT INTO audit_head VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
CREATE INDEX audit_runs_run_id ON audit_runs (run_id);
CREATE INDEX audit_runs_user ON audit_runs ("user");
CREATE INDEX audit_calls_run_id ON audit_calls (run_id);
CREATE INDEX audit_events_actor ON audit_events (actor);
)sql";

// Version 2: the code tools. code_tools_meta's row is both the lock every
// change takes first and the generation counter; a statement-level trigger
// bumps the counter on any change of code_tools, made through a store or
// with plain SQL, so every gateway polling it sees every change.
constexpr char kCodeTools[] = R"sql(
CREATE TABLE code_tools (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  endpoint TEXT NOT NULL, name TEXT NOT NULL, version BIGINT NOT NULL,
  description TEXT NOT NULL, language TEXT NOT NULL, code TEXT NOT NULL,
  input_schema TEXT NOT NULL, connectors TEXT NOT NULL, tools TEXT NOT NULL, limits TEXT NOT NULL,
  hash TEXT NOT NULL, state TEXT NOT NULL,
  proposer TEXT NOT NULL, proposed_at BIGINT NOT NULL,
  decided_by TEXT NOT NULL DEFAULT '', decided_at BIGINT NOT NULL DEFAULT 0,
  approved_by TEXT NOT NULL DEFAULT '', approved_at BIGINT NOT NULL DEFAULT 0,
  allow_write BIGINT NOT NULL DEFAULT 0, run_as_definer BIGINT NOT NULL DEFAULT 0,
  definer_role TEXT NOT NULL DEFAULT '', approval_reason TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  UNIQUE (endpoint, name, version));
CREATE INDEX code_tools_by_name ON code_tools (endpoint, name, state);
CREATE TABLE code_tools_meta (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1), generation BIGINT NOT NULL);
INSERT INTO code_tools_meta VALUES (1, 0);
CREATE FUNCTION airlock_code_tools_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE code_tools_meta SET generation = generation + 1 WHERE singleton = 1;
  RETURN NULL;
END $$;
CREATE TRIGGER code_tools_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON code_tools
  FOR EACH STATEMENT EXECUTE FUNCTION airlock_code_tools_changed();
)sql";

// Version 3: the API keys (only the SHA-256 of each secret).
constexpr char kApiKeys[] = R"sql(
CREATE TABLE api_keys (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY, name TEXT NOT NULL, "user" TEXT NOT NULL, role TEXT NOT NULL,
  created_at BIGINT NOT NULL, revoked_at BIGINT NOT NULL DEFAULT 0,
  sha256 TEXT NOT NULL UNIQUE);
)sql";

// Version 4: MCP tasks (the io.modelcontextprotocol/tasks extension,
// tasks/task_store.h): one row per task until its TTL has passed.
constexpr char kTasks[] = R"sql(
CREATE TABLE mcp_tasks (
  id TEXT PRIMARY KEY, owner TEXT NOT NULL, tool TEXT NOT NULL, run_id TEXT NOT NULL,
  status TEXT NOT NULL, status_message TEXT NOT NULL,
  created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL, ttl_ms BIGINT NOT NULL,
  lease_owner TEXT NOT NULL, lease_expires_ms BIGINT NOT NULL,
  result TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '',
  cancel_requested BOOLEAN NOT NULL DEFAULT false);
CREATE INDEX mcp_tasks_owner ON mcp_tasks (owner, status);
CREATE INDEX mcp_tasks_expiry ON mcp_tasks ((created_ms + ttl_ms));
)sql";

// Version 5: the session book (sessions/pg_session_book.h): one row per
// open code session (open_session), so that every gateway serves every
// session; runner_host says which runner host holds its jail, opened_by
// which gateway opened it (for operators). A row is expired once ends_ms
// has passed, or expires_ms with no call in flight.
constexpr char kCodeSessions[] = R"sql(
CREATE TABLE code_sessions (
  id TEXT PRIMARY KEY, owner TEXT NOT NULL, endpoint TEXT NOT NULL, language TEXT NOT NULL,
  isolation TEXT NOT NULL, memory_mb BIGINT NOT NULL, idle_timeout_s BIGINT NOT NULL,
  created_ms BIGINT NOT NULL, last_used_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL, ends_ms BIGINT NOT NULL,
  calls BIGINT NOT NULL DEFAULT 0, calls_in_flight INTEGER NOT NULL DEFAULT 0,
  lost_reason TEXT NOT NULL DEFAULT '', starting BOOLEAN NOT NULL,
  runner_host TEXT NOT NULL DEFAULT '', opened_by TEXT NOT NULL);
CREATE INDEX code_sessions_owner ON code_sessions (owner);
CREATE INDEX code_sessions_expires ON code_sessions (expires_ms);
CREATE INDEX code_sessions_ends ON code_sessions (ends_ms);
)sql";

// Version 6: a session's mode (open_session's `mode`): "" for a plain
// interpreter, "codemode" for one whose cells call tools (execute).
constexpr char kCodeSessionMode[] = R"sql(
ALTER TABLE code_sessions ADD COLUMN mode TEXT NOT NULL DEFAULT '';
)sql";

constexpr char kCreateTable[] =
    "CREATE TABLE IF NOT EXISTS airlock_schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())";

// version -> name of what the database has applied; empty without the table.
StatusOr<std::map<int, std::string>> Applied(pqxx::transaction_base& tx) {
  std::map<int, std::string> out;
  if (!tx.exec1("SELECT to_regclass('airlock_schema_migrations') IS NOT NULL")[0].as<bool>()) return out;
  for (const pqxx::row& r : tx.exec("SELECT version, name FROM airlock_schema_migrations ORDER BY version")) {
    out[r[0].as<int>()] = r[1].as<std::string>();
  }
  return out;
}

// FailedPrecondition if `applied` has a version `migrations` lacks or names
// differently.
Status Compatible(const std::map<int, std::string>& applied, const std::vector<PgMigration>& migrations) {
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  for (const auto& [version, name] : applied) {
    if (version > latest) {
      return FailedPrecondition("the database's airlock schema is at version " + std::to_string(applied.rbegin()->first) +
                                " (\"" + applied.rbegin()->second + "\"), newer than this airlock knows (" +
                                std::to_string(latest) + "): upgrade airlock, or use another database");
    }
    for (const PgMigration& m : migrations) {
      if (m.version == version && name != m.name) {
        return FailedPrecondition("the database's schema migration " + std::to_string(version) + " is \"" + name +
                                  "\" but this airlock's is \"" + m.name + "\": not the same airlock schema");
      }
    }
  }
  return OkStatus();
}

bool UpToDate(const std::map<int, std::string>& applied, const std::vector<PgMigration>& migrations) {
  for (const PgMigration& m : migrations) {
    if (!applied.count(m.version)) return false;
  }
  return true;
}

}  // namespace

const std::vector<PgMigration>& PgMigrations() {
  static const std::vector<PgMigration> m = {
      {kPgSchemaAuditLog, "audit log", kAuditLog},
      {kPgSchemaCodeTools, "code tools", kCodeTools},
      {kPgSchemaApiKeys, "api keys", kApiKeys},
      {kPgSchemaTasks, "mcp tasks", kTasks},
      {kPgSchemaCodeSessions, "code sessions", kCodeSessions},
      {kPgSchemaCodeSessionMode, "code session mode", kCodeSessionMode},
  };
  return m;
}

Status MigratePg(PgDatabase& db) { return MigratePg(db, PgMigrations()); }

Status MigratePg(PgDatabase& db, const std::vector<PgMigration>& migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) return Internal("schema migrations are not numbered 1, 2, ...");
  }
  // Usually there is nothing to do: find out without taking the lock.
  std::map<int, std::string> applied;
  AIRLOCK_RETURN_IF_ERROR(db.Transact([&](pqxx::transaction_base& tx) -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(applied, Applied(tx));
    return OkStatus();
  }));
  AIRLOCK_RETURN_IF_ERROR(Compatible(applied, migrations).WithContext("postgres (" + db.where() + ")"));
  if (UpToDate(applied, migrations)) return OkStatus();

  Status st = db.WithConnection([&](pqxx::connection& conn) -> Status {
    {
      pqxx::nontransaction lock(conn);
      lock.exec("SELECT pg_advisory_lock(" + std::to_string(kPgMigrationLock) + ")");
    }
    // Released when the connection closes (WithConnection closes it), and
    // by the server if this process dies.
    {
      pqxx::work tx(conn);
      tx.exec(kCreateTable);
      tx.commit();
    }
    {
      pqxx::work tx(conn);
      AIRLOCK_ASSIGN_OR_RETURN(applied, Applied(tx));
      tx.commit();
    }
    AIRLOCK_RETURN_IF_ERROR(Compatible(applied, migrations));
    for (const PgMigration& m : migrations) {
      if (applied.count(m.version)) continue;  // another gateway was first
      pqxx::work tx(conn);
      try {
        tx.exec(m.sql);
      } catch (const pqxx::sql_error& e) {
        return Internal("schema migration " + std::to_string(m.version) + " (\"" + m.name + "\") failed: " + e.what());
      }
      tx.exec_params("INSERT INTO airlock_schema_migrations (version, name) VALUES ($1, $2)", m.version,
                     std::string(m.name));
      tx.commit();
    }
    return OkStatus();
  });
  return st.WithContext("postgres (" + db.where() + "): migrating the schema");
}

StatusOr<int> PgSchemaVersion(PgDatabase& db) {
  int version = 0;
  AIRLOCK_RETURN_IF_ERROR(db.Transact([&](pqxx::transaction_base& tx) -> Status {
    using VersionNames = std::map<int, std::string>;
    AIRLOCK_ASSIGN_OR_RETURN(VersionNames applied, Applied(tx));
    version = applied.empty() ? 0 : applied.rbegin()->first;
    return OkStatus();
  }));
  return version;
}

Status CheckPgSchema(PgDatabase& db, int needed) {
  std::map<int, std::string> applied;
  AIRLOCK_RETURN_IF_ERROR(db.Transact([&](pqxx::transaction_base& tx) -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(applied, Applied(tx));
    return OkStatus();
  }));
  const std::string where = "postgres (" + db.where() + ")";
  AIRLOCK_RETURN_IF_ERROR(Compatible(applied, PgMigrations()).WithContext(where));
  if (!applied.count(needed)) {
    return NotFound(where + ": " +
                    (applied.empty() ? std::string("the database has no airlock schema")
                                     : "the database's airlock schema lacks migration " + std::to_string(needed)) +
                    " (an airlock with state.backend \"postgres\" creates it when it starts)");
  }
  return OkStatus();
}

}  // namespace airlock::state
