// The API key store in one JSON file (server.http.keys_file; mode 0600)
// that several processes may share: `airlock keys create|list|revoke`
// change it with an exclusive flock and an atomic rename, and a server's
// Authenticate() re-reads it whenever it changed, so a revocation takes
// effect on the very next request.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<FileKeyStore> keys, FileKeyStore::Open("/var/lib/airlock/keys.json"));
//   std::optional<Identity> who = keys->Authenticate(bearer_token);
//
// The file: {"version": 1, "keys": [{id, name, user, role, created_at,
// revoked_at, sha256}]}.
#ifndef AIRLOCK_AUTH_FILE_KEY_STORE_H_
#define AIRLOCK_AUTH_FILE_KEY_STORE_H_

#include <sys/stat.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "auth/key_store.h"
#include "base/status.h"

namespace airlock::auth {

class FileKeyStore : public KeyStore {
 public:
  // Opens (creating an empty store with mode 0600 if missing) `path`.
  static StatusOr<std::unique_ptr<FileKeyStore>> Open(const std::string& path);

  StatusOr<NewKey> Create(const std::string& user, const std::string& role, const std::string& name) override;
  StatusOr<std::vector<KeyInfo>> List() override;
  Status Revoke(const std::string& id) override;
  std::optional<Identity> Authenticate(const std::string& secret) override;
  // Re-reads the file if it changed.
  bool IsActive(const std::string& id) override;

 private:
  struct Entry {
    KeyInfo info;
    std::string sha256;  // hex of the secret
  };
  explicit FileKeyStore(std::string path) : path_(std::move(path)) {}
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

#endif  // AIRLOCK_AUTH_FILE_KEY_STORE_H_
