#include "cli/admin_identity.h"

#include <sys/stat.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "auth/key_store.h"
#include "state/state_stores.h"

namespace airlock::cli {
namespace {

bool IsAdminRole(const governance::Policy& policy, const std::string& role) {
  const governance::Role* r = policy.FindRole(role);
  return r != nullptr && r->admin;
}

}  // namespace

StatusOr<bool> IsAdminUser(const config::Config& config, const governance::Policy& policy,
                           const std::string& user) {
  if (user.empty()) return false;
  if (IsAdminRole(policy, policy.stdio().role) && user == policy.stdio().user) return true;
  if (!state::UsesPostgres(config)) {
    // A key file that is not there (or none configured) holds no admins;
    // it is not created to find that out.
    const std::string keys_file = state::KeysFilePath(config);
    struct stat st;
    if (!state::ApiKeysEnabled(config) || (stat(keys_file.c_str(), &st) != 0 && errno == ENOENT)) return false;
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<auth::KeyStore> keys, state::OpenKeyStore(config));
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<auth::KeyInfo> list, keys->List());
  for (const auth::KeyInfo& k : list) {
    if (k.user == user && k.revoked_at == 0 && IsAdminRole(policy, k.role)) return true;
  }
  return false;
}

}  // namespace airlock::cli
