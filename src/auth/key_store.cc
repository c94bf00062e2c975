#include "auth/key_store.h"

#include <ctime>

#include "auth/file_key_store.h"
#include "base/encoding.h"
#include "base/random.h"

namespace airlock::auth {
namespace {

constexpr char kSecretPrefix[] = "alk_";
constexpr size_t kSecretBytes = 32;

std::string Base64Url(std::string_view bytes) {
  std::string s = Base64Encode(bytes);
  for (char& c : s) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

StatusOr<std::unique_ptr<KeyStore>> KeyStore::Open(const std::string& path) {
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<FileKeyStore> store, FileKeyStore::Open(path));
  return std::unique_ptr<KeyStore>(std::move(store));
}

StatusOr<NewKey> GenerateKey(const std::string& user, const std::string& role, const std::string& name) {
  if (!ValidName(user)) return InvalidArgument("user must be 1-64 characters of [A-Za-z0-9_.@-]");
  if (!ValidName(role)) return InvalidArgument("role must be 1-64 characters of [A-Za-z0-9_.@-]");
  if (name.size() > 128 || !IsValidUtf8(name)) return InvalidArgument("name must be UTF-8 of at most 128 bytes");
  AIRLOCK_ASSIGN_OR_RETURN(std::string secret_bytes, RandomBytes(kSecretBytes));
  AIRLOCK_ASSIGN_OR_RETURN(std::string id_bytes, RandomBytes(6));
  NewKey key;
  key.secret = kSecretPrefix + Base64Url(secret_bytes);
  key.info.id = "k_" + Hex(id_bytes);
  key.info.name = name;
  key.info.user = user;
  key.info.role = role;
  key.info.created_at = static_cast<int64_t>(time(nullptr));
  return key;
}

bool PlausibleSecret(const std::string& secret) {
  return secret.size() <= 256 && secret.rfind(kSecretPrefix, 0) == 0;
}

std::string SecretHash(const std::string& secret) { return Sha256Hex(secret); }

Status NoSuchKey(const std::string& id) {
  return NotFound("no key with id \"" + SanitizeUtf8(id.substr(0, 64)) + "\"");
}

}  // namespace airlock::auth
