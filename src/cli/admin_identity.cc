#include "cli/admin_identity.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

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

std::string StdioUser(const governance::Policy& policy) {
  if (!policy.stdio().user.empty()) return policy.stdio().user;
  std::vector<char> buf(16384);
  struct passwd pw, *found = nullptr;
  if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) return pw.pw_name;
  return "";
}

StatusOr<bool> IsAdminUser(const config::Config& config, const governance::Policy& policy,
                           const std::string& user) {
  if (user.empty()) return false;
  if (IsAdminRole(policy, policy.stdio().role) && user == StdioUser(policy)) return true;
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
