#include "auth/file_key_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/unique_fd.h"

namespace airlock::auth {
namespace {

using nlohmann::json;

// Compares without an early exit (the inputs are hashes, so this is belt
// and braces).
bool SameBytes(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

StatusOr<std::string> ReadAll(int fd) {
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read key store");
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

// The file: {"version": 1, "keys": [{id, name, user, role, created_at, revoked_at, sha256}]}
namespace {

template <typename Entry>
StatusOr<std::vector<Entry>> ParseStore(const std::string& text, const std::string& path) {
  std::vector<Entry> entries;
  if (text.empty()) return entries;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("keys") || !j["keys"].is_array()) {
    return InvalidArgument(path + ": not an airlock key store");
  }
  for (const json& k : j["keys"]) {
    if (!k.is_object()) return InvalidArgument(path + ": bad key entry");
    Entry e;
    try {
      e.info.id = k.at("id").get<std::string>();
      e.info.name = k.value("name", "");
      e.info.user = k.at("user").get<std::string>();
      e.info.role = k.at("role").get<std::string>();
      e.info.created_at = k.value("created_at", int64_t{0});
      e.info.revoked_at = k.value("revoked_at", int64_t{0});
      e.sha256 = k.at("sha256").get<std::string>();
    } catch (const json::exception&) {
      return InvalidArgument(path + ": bad key entry");
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace

StatusOr<std::unique_ptr<FileKeyStore>> FileKeyStore::Open(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return ErrnoError("open key store " + path);
  std::unique_ptr<FileKeyStore> store(new FileKeyStore(path));
  std::lock_guard<std::mutex> lock(store->mu_);
  AIRLOCK_RETURN_IF_ERROR(store->RefreshLocked());
  return store;
}

Status FileKeyStore::RefreshLocked() {
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) return ErrnoError("stat key store " + path_);
  if (loaded_ && st.st_ino == loaded_ino_ && st.st_mtim.tv_sec == loaded_mtime_.tv_sec &&
      st.st_mtim.tv_nsec == loaded_mtime_.tv_nsec) {
    return OkStatus();
  }
  UniqueFd fd(open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return ErrnoError("open key store " + path_);
  if (fstat(fd.get(), &st) != 0) return ErrnoError("stat key store " + path_);
  AIRLOCK_ASSIGN_OR_RETURN(std::string text, ReadAll(fd.get()));
  AIRLOCK_ASSIGN_OR_RETURN(entries_, ParseStore<Entry>(text, path_));
  loaded_ = true;
  loaded_ino_ = st.st_ino;
  loaded_mtime_ = st.st_mtim;
  return OkStatus();
}

Status FileKeyStore::Modify(const std::function<Status(std::vector<Entry>&)>& change) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string lock_path = path_ + ".lock";
  UniqueFd lock_fd(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock_fd) return ErrnoError("open " + lock_path);
  while (flock(lock_fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoError("lock " + lock_path);
  }
  loaded_ = false;  // another process may have written since our last read
  AIRLOCK_RETURN_IF_ERROR(RefreshLocked());
  std::vector<Entry> entries = entries_;
  AIRLOCK_RETURN_IF_ERROR(change(entries));

  json keys = json::array();
  for (const Entry& e : entries) {
    keys.push_back({{"id", e.info.id},
                    {"name", e.info.name},
                    {"user", e.info.user},
                    {"role", e.info.role},
                    {"created_at", e.info.created_at},
                    {"revoked_at", e.info.revoked_at},
                    {"sha256", e.sha256}});
  }
  const std::string text = json{{"version", 1}, {"keys", keys}}.dump(2) + "\n";
  const std::string tmp = path_ + ".tmp." + std::to_string(getpid());
  {
    UniqueFd out(open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!out) return ErrnoError("create " + tmp);
    if (write(out.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) || fsync(out.get()) != 0) {
      const Status st = ErrnoError("write " + tmp);
      unlink(tmp.c_str());
      return st;
    }
  }
  if (rename(tmp.c_str(), path_.c_str()) != 0) {
    const Status st = ErrnoError("replace " + path_);
    unlink(tmp.c_str());
    return st;
  }
  loaded_ = false;
  return RefreshLocked();
}

StatusOr<NewKey> FileKeyStore::Create(const std::string& user, const std::string& role, const std::string& name) {
  AIRLOCK_ASSIGN_OR_RETURN(NewKey key, GenerateKey(user, role, name));
  Entry entry{key.info, SecretHash(key.secret)};
  AIRLOCK_RETURN_IF_ERROR(Modify([&](std::vector<Entry>& entries) {
    entries.push_back(entry);
    return OkStatus();
  }));
  return key;
}

StatusOr<std::vector<KeyInfo>> FileKeyStore::List() {
  std::lock_guard<std::mutex> lock(mu_);
  AIRLOCK_RETURN_IF_ERROR(RefreshLocked());
  std::vector<KeyInfo> out;
  for (const Entry& e : entries_) out.push_back(e.info);
  return out;
}

Status FileKeyStore::Revoke(const std::string& id) {
  return Modify([&](std::vector<Entry>& entries) {
    for (Entry& e : entries) {
      if (e.info.id != id) continue;
      if (e.info.revoked_at == 0) e.info.revoked_at = static_cast<int64_t>(time(nullptr));
      return OkStatus();
    }
    return NoSuchKey(id);
  });
}

std::optional<Identity> FileKeyStore::Authenticate(const std::string& secret) {
  if (!PlausibleSecret(secret)) return std::nullopt;
  const std::string hash = SecretHash(secret);
  std::lock_guard<std::mutex> lock(mu_);
  if (!RefreshLocked().ok()) return std::nullopt;  // fail closed
  std::optional<Identity> found;
  for (const Entry& e : entries_) {
    if (SameBytes(e.sha256, hash) && e.info.revoked_at == 0) found = Identity{e.info.user, e.info.role, e.info.id};
  }
  return found;
}

bool FileKeyStore::IsActive(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!RefreshLocked().ok()) return false;  // fail closed
  for (const Entry& e : entries_) {
    if (e.info.id == id) return e.info.revoked_at == 0;
  }
  return false;
}

}  // namespace airlock::auth
