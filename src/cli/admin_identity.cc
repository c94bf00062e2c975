#include "cli/admin_identity.h"

#include <sys/stat.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "auth/key_store.h"

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
  const std::string& keys_file = config.server.http.keys_file;
  struct stat st;
  if (keys_file.empty() || (stat(keys_file.c_str(), &st) != 0 && errno == ENOENT)) return false;
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<auth::KeyStore> keys, auth::KeyStore::Open(keys_file));
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<auth::KeyInfo> list, keys->List());
  for (const auth::KeyInfo& k : list) {
    if (k.user == user && k.revoked_at == 0 && IsAdminRole(policy, k.role)) return true;
  }
  return false;
}

}  // namespace airlock::cli
