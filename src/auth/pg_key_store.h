// The API key store in PostgreSQL that several gateways share (issue 22,
// docs/state.md): the table api_keys of schema migration 3
// (state/pg_migrations.h), one row per key with the SHA-256 of its secret,
// never the secret.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<state::PgDatabase> db, state::PgDatabase::Connect(dsn));
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<PgKeyStore> keys, PgKeyStore::Open(db));
//   std::optional<Identity> who = keys->Authenticate(bearer_token);
//
// Authenticate() and IsActive() read the table every time (one indexed
// query; nothing is cached), so a key revoked through any gateway or
// `airlock keys revoke` is refused by every gateway from its next request
// on. The lookup is by the secret's hash: timing can tell nothing about a
// secret that its SHA-256 does not. A database that cannot be read admits
// nobody.
#ifndef AIRLOCK_AUTH_PG_KEY_STORE_H_
#define AIRLOCK_AUTH_PG_KEY_STORE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/key_store.h"
#include "base/status.h"
#include "db/pg_database.h"

namespace airlock::auth {

class PgKeyStore : public KeyStore {
 public:
  // Brings the schema up to date (state::MigratePg), then opens the store.
  static StatusOr<std::unique_ptr<PgKeyStore>> Open(std::shared_ptr<state::PgDatabase> db);

  StatusOr<NewKey> Create(const std::string& user, const std::string& role, const std::string& name) override;
  StatusOr<std::vector<KeyInfo>> List() override;
  Status Revoke(const std::string& id) override;
  std::optional<Identity> Authenticate(const std::string& secret) override;
  bool IsActive(const std::string& id) override;

 private:
  explicit PgKeyStore(std::shared_ptr<state::PgDatabase> db) : db_(std::move(db)) {}

  const std::shared_ptr<state::PgDatabase> db_;
};

}  // namespace airlock::auth

#endif  // AIRLOCK_AUTH_PG_KEY_STORE_H_
