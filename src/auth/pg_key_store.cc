#include "auth/pg_key_store.h"

#include <ctime>

#include "db/pg_migrations.h"

namespace airlock::auth {

StatusOr<std::unique_ptr<PgKeyStore>> PgKeyStore::Open(std::shared_ptr<state::PgDatabase> db) {
  if (db == nullptr) return InvalidArgument("key store: no database");
  AIRLOCK_RETURN_IF_ERROR(state::MigratePg(*db));
  return std::unique_ptr<PgKeyStore>(new PgKeyStore(std::move(db)));
}

StatusOr<NewKey> PgKeyStore::Create(const std::string& user, const std::string& role, const std::string& name) {
  AIRLOCK_ASSIGN_OR_RETURN(NewKey key, GenerateKey(user, role, name));
  if (state::HasNul(name)) return InvalidArgument("name must not contain a NUL byte");
  const std::string hash = SecretHash(key.secret);
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params("INSERT INTO api_keys (id, name, \"user\", role, created_at, sha256) VALUES ($1, $2, $3, $4, $5, $6)",
                   key.info.id, key.info.name, key.info.user, key.info.role, key.info.created_at, hash);
    return OkStatus();
  });
  if (!st.ok()) return st.WithContext("key store");
  return key;
}

StatusOr<std::vector<KeyInfo>> PgKeyStore::List() {
  std::vector<KeyInfo> out;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    out.clear();
    for (const pqxx::row& r :
         tx.exec("SELECT id, name, \"user\", role, created_at, revoked_at FROM api_keys ORDER BY seq")) {
      KeyInfo k;
      k.id = r[0].as<std::string>();
      k.name = r[1].as<std::string>();
      k.user = r[2].as<std::string>();
      k.role = r[3].as<std::string>();
      k.created_at = r[4].as<int64_t>();
      k.revoked_at = r[5].as<int64_t>();
      out.push_back(std::move(k));
    }
    return OkStatus();
  });
  if (!st.ok()) return st.WithContext("key store");
  return out;
}

Status PgKeyStore::Revoke(const std::string& id) {
  if (state::HasNul(id)) return NoSuchKey(id);
  bool found = false;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    // Revoking twice keeps the first revocation's time.
    pqxx::result r = tx.exec_params(
        "UPDATE api_keys SET revoked_at = CASE WHEN revoked_at = 0 THEN $2::bigint ELSE revoked_at END "
        "WHERE id = $1::text",
        id, static_cast<int64_t>(time(nullptr)));
    found = r.affected_rows() > 0;
    return OkStatus();
  });
  if (!st.ok()) return st.WithContext("key store");
  return found ? OkStatus() : NoSuchKey(id);
}

std::optional<Identity> PgKeyStore::Authenticate(const std::string& secret) {
  if (!PlausibleSecret(secret) || state::HasNul(secret)) return std::nullopt;
  const std::string hash = SecretHash(secret);
  std::optional<Identity> who;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    pqxx::result r =
        tx.exec_params("SELECT \"user\", role, id FROM api_keys WHERE sha256 = $1::text AND revoked_at = 0", hash);
    who.reset();
    if (!r.empty()) who = Identity{r[0][0].as<std::string>(), r[0][1].as<std::string>(), r[0][2].as<std::string>()};
    return OkStatus();
  });
  if (!st.ok()) return std::nullopt;  // fail closed
  return who;
}

bool PgKeyStore::IsActive(const std::string& id) {
  if (state::HasNul(id)) return false;
  bool active = false;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    pqxx::result r = tx.exec_params("SELECT revoked_at FROM api_keys WHERE id = $1::text", id);
    active = !r.empty() && r[0][0].as<int64_t>() == 0;
    return OkStatus();
  });
  return st.ok() && active;  // fail closed
}

}  // namespace airlock::auth
