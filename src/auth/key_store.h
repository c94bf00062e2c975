// API keys for the HTTP transport (issue 5 groundwork; not wired in yet).
//
// A key maps to a user and a role. Only the SHA-256 of a key is stored, so
// the file never holds a usable secret; the key itself is shown once, when
// it is created. The store is one JSON file (mode 0600) that several
// processes may share: `airlock keys create|list|revoke` change it with an
// exclusive flock and an atomic rename, and a server's Authenticate()
// re-reads it whenever it changed, so a revocation takes effect on the very
// next request.
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto store, KeyStore::Open("/var/lib/airlock/keys.json"));
//   AIRLOCK_ASSIGN_OR_RETURN(NewKey k, store->Create("alice", "operator", "laptop"));
//   std::cout << k.secret;                              // "alk_...", shown once
//   std::optional<Identity> who = store->Authenticate(bearer_token);
//   store->Revoke(k.info.id);
#ifndef AIRLOCK_AUTH_KEY_STORE_H_
#define AIRLOCK_AUTH_KEY_STORE_H_

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
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

class KeyStore {
 public:
  // Opens (creating an empty store with mode 0600 if missing) `path`.
  static StatusOr<std::unique_ptr<KeyStore>> Open(const std::string& path);

  // User and role: 1-64 characters of [A-Za-z0-9_.@-]; name: up to 128 bytes.
  StatusOr<NewKey> Create(const std::string& user, const std::string& role, const std::string& name);
  // Every key, revoked ones included, oldest first. Never the hashes.
  StatusOr<std::vector<KeyInfo>> List();
  // NotFound if there is no such key; revoking twice is OK.
  Status Revoke(const std::string& id);
  // The identity of an active key; nullopt for anything else (unknown,
  // revoked, malformed, or the store unreadable: fail closed).
  std::optional<Identity> Authenticate(const std::string& secret);
  // Whether key `id` exists and is not revoked (re-reading the file if it
  // changed); false if the store is unreadable. For sessions that outlive
  // the request that authenticated them (the console's sign-in).
  bool IsActive(const std::string& id);

 private:
  struct Entry {
    KeyInfo info;
    std::string sha256;  // hex of the secret
  };
  explicit KeyStore(std::string path) : path_(std::move(path)) {}
  // Re-reads the file if it changed since the last read. Caller holds mu_.
  Status RefreshLocked();
  // Runs `change` on the current entries under an exclusive file lock, then
  // writes the result atomically.
  Status Modify(const std::function<Status(std::vector<Entry>&)>& change);

  const std::string path_;
  std::mutex mu_;
  std::vector<Entry> entries_;
  struct timespec loaded_mtime_ {};
  ino_t loaded_ino_ = 0;
  bool loaded_ = false;
};

}  // namespace airlock::auth

#endif  // AIRLOCK_AUTH_KEY_STORE_H_
