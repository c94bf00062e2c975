#include "state/state_stores.h"

#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "audit/pg_audit_store.h"
#include "audit/sqlite_audit_store.h"
#include "auth/file_key_store.h"
#include "auth/pg_key_store.h"
#include "codetools/pg_code_tool_store.h"
#include "codetools/sqlite_code_tool_store.h"
#include "sessions/memory_session_book.h"
#include "sessions/pg_session_book.h"
#include "tasks/pg_task_store.h"

namespace airlock::state {
namespace {

// mkdir -p `dir`: missing components are created with mode 0700; existing
// ones are left as they are.
Status MakeDirs(const std::string& dir) {
  for (size_t pos = dir.find('/', 1);; pos = dir.find('/', pos + 1)) {
    const std::string prefix = dir.substr(0, pos);
    if (!prefix.empty() && prefix.back() != '/') {
      if (mkdir(prefix.c_str(), 0700) != 0) {
        if (errno != EEXIST) return ErrnoError("mkdir " + prefix);
        struct stat st;
        if (stat(prefix.c_str(), &st) != 0) return ErrnoError("stat " + prefix);
        if (!S_ISDIR(st.st_mode)) return FailedPrecondition(prefix + " is not a directory");
      }
    }
    if (pos == std::string::npos) break;
  }
  return OkStatus();
}

// MakeDirs of the directory holding `file`.
Status MakeParentDirs(const std::string& file) {
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos || slash == 0) return OkStatus();
  return MakeDirs(file.substr(0, slash));
}

std::string Trim(const std::string& s) {
  const char* kSpace = " \t\r\n\f\v";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

}  // namespace

StatusOr<std::string> PostgresDsn(const config::StateConfig& state) {
  if (state.postgres_dsn_file.empty()) return state.postgres_dsn;
  std::ifstream in(state.postgres_dsn_file);
  if (!in) return ErrnoError("state.postgres_dsn_file " + state.postgres_dsn_file);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return ErrnoError("state.postgres_dsn_file " + state.postgres_dsn_file);
  return Trim(text.str());
}

StatusOr<std::shared_ptr<PgDatabase>> ConnectPostgres(const config::Config& c, PgDatabase::Options options) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string dsn, PostgresDsn(c.state));
  return PgDatabase::Connect(dsn, options);
}

std::string AuditStoreLocation(const config::Config& c) {
  return UsesPostgres(c) ? "in PostgreSQL" : c.AuditDbPath();
}

std::string CodeToolStoreLocation(const config::Config& c) {
  return UsesPostgres(c) ? "in PostgreSQL" : c.CodeToolsDbPath();
}

StatusOr<std::unique_ptr<audit::AuditStore>> OpenAuditStore(const config::Config& c) {
  if (UsesPostgres(c)) {
    AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, ConnectPostgres(c));
    AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<audit::PgAuditStore> store, audit::PgAuditStore::Open(std::move(db)));
    return std::unique_ptr<audit::AuditStore>(std::move(store));
  }
  const std::string path = c.AuditDbPath();
  AIRLOCK_RETURN_IF_ERROR(MakeParentDirs(path));
  audit::SqliteAuditStore::Options options;
  options.sync_every_record = c.audit.sync == "full";
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<audit::SqliteAuditStore> store,
                           audit::SqliteAuditStore::Open(path, std::move(options)));
  return std::unique_ptr<audit::AuditStore>(std::move(store));
}

StatusOr<std::unique_ptr<audit::AuditStore>> OpenExistingAuditStore(const config::Config& c) {
  if (UsesPostgres(c)) {
    PgDatabase::Options options;
    options.max_connections = 1;
    AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, ConnectPostgres(c, options));
    AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<audit::PgAuditStore> store,
                             audit::PgAuditStore::OpenExisting(std::move(db)));
    return std::unique_ptr<audit::AuditStore>(std::move(store));
  }
  const std::string path = c.AuditDbPath();
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound("no audit log at " + path);
    return ErrnoError("stat " + path);
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<audit::SqliteAuditStore> store,
                           audit::SqliteAuditStore::OpenReadOnly(path));
  return std::unique_ptr<audit::AuditStore>(std::move(store));
}

StatusOr<std::unique_ptr<codetools::CodeToolStore>> OpenCodeToolStore(const config::Config& c) {
  if (UsesPostgres(c)) {
    PgDatabase::Options options;
    options.max_connections = 2;
    AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, ConnectPostgres(c, options));
    AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<codetools::PgCodeToolStore> store,
                             codetools::PgCodeToolStore::Open(std::move(db)));
    return std::unique_ptr<codetools::CodeToolStore>(std::move(store));
  }
  AIRLOCK_RETURN_IF_ERROR(MakeDirs(c.ResolvedStateDir()));
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<codetools::SqliteCodeToolStore> store,
                           codetools::SqliteCodeToolStore::Open(c.CodeToolsDbPath()));
  return std::unique_ptr<codetools::CodeToolStore>(std::move(store));
}

StatusOr<std::shared_ptr<tasks::TaskStore>> OpenTaskStore(const config::Config& c) {
  if (!UsesPostgres(c)) return std::shared_ptr<tasks::TaskStore>(std::make_shared<tasks::MemoryTaskStore>());
  PgDatabase::Options options;
  options.max_connections = 2;
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, ConnectPostgres(c, options));
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<tasks::PgTaskStore> store, tasks::PgTaskStore::Open(std::move(db)));
  return std::shared_ptr<tasks::TaskStore>(std::move(store));
}

StatusOr<std::shared_ptr<sessions::SessionBook>> OpenSessionBook(const config::Config& c, const std::string& gateway) {
  if (!UsesPostgres(c)) return std::shared_ptr<sessions::SessionBook>(std::make_shared<sessions::MemorySessionBook>());
  PgDatabase::Options options;
  options.max_connections = 2;  // a statement per session call, open and close, and the reaper's
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, ConnectPostgres(c, options));
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<sessions::PgSessionBook> book,
                           sessions::PgSessionBook::Open(std::move(db), gateway));
  return std::shared_ptr<sessions::SessionBook>(std::move(book));
}

bool ApiKeysEnabled(const config::Config& c) {
  return c.server.http.api_keys || (!UsesPostgres(c) && !c.server.http.keys_file.empty());
}

std::string KeysFilePath(const config::Config& c) {
  return c.server.http.keys_file.empty() ? c.ResolvedStateDir() + "/keys.json" : c.server.http.keys_file;
}

StatusOr<std::unique_ptr<auth::KeyStore>> OpenKeyStore(const config::Config& c) {
  if (UsesPostgres(c)) {
    PgDatabase::Options options;
    options.max_connections = 4;  // a query per authenticated HTTP request
    AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, ConnectPostgres(c, options));
    AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<auth::PgKeyStore> store, auth::PgKeyStore::Open(std::move(db)));
    return std::unique_ptr<auth::KeyStore>(std::move(store));
  }
  if (c.server.http.keys_file.empty()) AIRLOCK_RETURN_IF_ERROR(MakeDirs(c.ResolvedStateDir()));
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<auth::FileKeyStore> store, auth::FileKeyStore::Open(KeysFilePath(c)));
  return std::unique_ptr<auth::KeyStore>(std::move(store));
}

}  // namespace airlock::state
