// API keys for the HTTP transport.
//
// A key maps to a user and a role. Only the SHA-256 of a key is stored, so
// the store never holds a usable secret; the key itself is shown once, when
// it is created. KeyStore is the interface; the stores are a JSON file
// (FileKeyStore, auth/file_key_store.h: server.http.keys_file) and a
// PostgreSQL table (PgKeyStore, auth/pg_key_store.h: state.backend
// "postgres"); state/state_stores.h opens the configured one.
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto store, KeyStore::Open("/var/lib/airlock/keys.json"));
//   AIRLOCK_ASSIGN_OR_RETURN(NewKey k, store->Create("alice", "operator", "laptop"));
//   std::cout << k.secret;                              // "alk_...", shown once
//   std::optional<Identity> who = store->Authenticate(bearer_token);
//   store->Revoke(k.info.id);
#ifndef AIRLOCK_AUTH_KEY_STORE_H_
#define AIRLOCK_AUTH_KEY_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace airlock::auth {

struct KeyInfo {
  std::string id;          // "k_" + 12 hex digits; public, used to revoke
  std::string name;        // what the key is for ("laptop")
  std::string user;
  std::string role;
  int64_t created_at = 0;  // unix seconds
  int64_t revoked_at = 0;  // 0: active
};

struct NewKey {
  KeyInfo info;
  std::string secret;  // "alk_" + 43 base64url characters (256 random bits)
};

struct Identity {
  std::string user;
  std::string role;
  std::string key_id;
};

// The API key store: FileKeyStore (one JSON file; auth/file_key_store.h)
// or PgKeyStore (a table several gateways share; auth/pg_key_store.h).
// Whichever it is, a revocation counts from the very next Authenticate()
// of every process that uses the store.
class KeyStore {
 public:
  virtual ~KeyStore() = default;

  // Opens (creating an empty store with mode 0600 if missing) the file
  // store at `path` (FileKeyStore::Open).
  static StatusOr<std::unique_ptr<KeyStore>> Open(const std::string& path);

  // User and role: 1-64 characters of [A-Za-z0-9_.@-]; name: up to 128 bytes.
  virtual StatusOr<NewKey> Create(const std::string& user, const std::string& role, const std::string& name) = 0;
  // Every key, revoked ones included, oldest first. Never the hashes.
  virtual StatusOr<std::vector<KeyInfo>> List() = 0;
  // NotFound if there is no such key; revoking twice is OK.
  virtual Status Revoke(const std::string& id) = 0;
  // The identity of an active key; nullopt for anything else (unknown,
  // revoked, malformed, or the store unreadable: fail closed).
  virtual std::optional<Identity> Authenticate(const std::string& secret) = 0;
  // Whether key `id` exists and is not revoked, as the store says now;
  // false if the store is unreadable. For sessions that outlive the request
  // that authenticated them (the console's sign-in).
  virtual bool IsActive(const std::string& id) = 0;
};

// For implementations. A new key: user, role and name checked as Create
// documents, a random id and secret, created_at now. Store only
// SecretHash(key.secret).
StatusOr<NewKey> GenerateKey(const std::string& user, const std::string& role, const std::string& name);
// False for anything that cannot be a key ("alk_" prefix, at most 256
// bytes): refused without a lookup.
bool PlausibleSecret(const std::string& secret);
// Hex SHA-256 of a secret: what a store keeps.
std::string SecretHash(const std::string& secret);
// Revoke's NotFound.
Status NoSuchKey(const std::string& id);

}  // namespace airlock::auth

#endif  // AIRLOCK_AUTH_KEY_STORE_H_
