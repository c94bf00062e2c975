// Where airlock keeps its state — the audit log, the code tools and the API
// keys — as config.state says (issue 22, docs/state.md). Every command and
// the server open their stores here, so a config with
//   "state": {"backend": "postgres", "postgres_dsn_file": "/run/secrets/airlock-dsn"}
// moves all three into one PostgreSQL database that several gateways share,
// and "sqlite" (the default) keeps them in files as before:
//   audit log    audit.path, default <state dir>/audit.db   | PgAuditStore
//   code tools   <state dir>/codetools.db                    | PgCodeToolStore
//   API keys     server.http.keys_file, default              | PgKeyStore
//                <state dir>/keys.json                       |
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditStore> audit, OpenAuditStore(config));
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<codetools::CodeToolStore> tools, OpenCodeToolStore(config));
//   if (ApiKeysEnabled(config)) { AIRLOCK_ASSIGN_OR_RETURN(auto keys, OpenKeyStore(config)); ... }
//
// With postgres, each Open connects (an unreachable database is an error
// at once: Unavailable, naming the DSN without its password) and brings the
// schema up to date (db/pg_migrations.h).
#ifndef AIRLOCK_STATE_STATE_STORES_H_
#define AIRLOCK_STATE_STATE_STORES_H_

#include <memory>
#include <string>

#include "audit/audit_store.h"
#include "auth/key_store.h"
#include "base/status.h"
#include "codetools/code_tool_store.h"
#include "config/config.h"
#include "db/pg_database.h"
#include "sessions/session_book.h"
#include "tasks/task_store.h"

namespace airlock::state {

inline bool UsesPostgres(const config::Config& c) { return c.state.backend == "postgres"; }

// The connection string: state.postgres_dsn, or the contents of
// state.postgres_dsn_file with surrounding whitespace trimmed. An empty
// string is valid (libpq's PG* environment variables say everything).
StatusOr<std::string> PostgresDsn(const config::StateConfig& state);

// A connection pool to the configured database (state.backend "postgres").
StatusOr<std::shared_ptr<PgDatabase>> ConnectPostgres(const config::Config& c,
                                                      PgDatabase::Options options = PgDatabase::Options());

// For messages: the SQLite file, or "in PostgreSQL".
std::string AuditStoreLocation(const config::Config& c);
std::string CodeToolStoreLocation(const config::Config& c);

// The audit log, to write it: the SQLite file (its directory created with
// mode 0700 if missing; audit.sync) or the database.
StatusOr<std::unique_ptr<audit::AuditStore>> OpenAuditStore(const config::Config& c);
// The audit log, to read it (`airlock audit`): nothing is created,
// migrated or written; NotFound ("no audit log ...") if there is none.
StatusOr<std::unique_ptr<audit::AuditStore>> OpenExistingAuditStore(const config::Config& c);

// The code tool store (the SQLite file and the state dir, mode 0700,
// created if missing).
StatusOr<std::unique_ptr<codetools::CodeToolStore>> OpenCodeToolStore(const config::Config& c);

// The MCP task table (tasks/task_store.h): in memory with sqlite (tasks
// live as long as the process), the shared table mcp_tasks with postgres
// (every gateway sees every task). Shared by every endpoint's server.
StatusOr<std::shared_ptr<tasks::TaskStore>> OpenTaskStore(const config::Config& c);

// The code-session book (sessions/session_book.h): in memory with sqlite
// (sessions live as long as this gateway), the shared table code_sessions
// with postgres (every gateway serves every session; `gateway` names this
// one in the rows it opens). Shared by every endpoint's server.
StatusOr<std::shared_ptr<sessions::SessionBook>> OpenSessionBook(const config::Config& c, const std::string& gateway);

// Whether every HTTP request needs an API key (and the console is
// possible): server.http.api_keys, or with sqlite a non-empty keys_file.
bool ApiKeysEnabled(const config::Config& c);
// The key file of the sqlite backend: server.http.keys_file, else
// <state dir>/keys.json.
std::string KeysFilePath(const config::Config& c);
// The configured key store: the file (created, mode 0600, if missing) or
// the database.
StatusOr<std::unique_ptr<auth::KeyStore>> OpenKeyStore(const config::Config& c);

}  // namespace airlock::state

#endif  // AIRLOCK_STATE_STATE_STORES_H_
