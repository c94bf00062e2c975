#include "admin/key_admin.h"

namespace airlock::admin {

namespace {

audit::EventRow KeyEvent(const char* kind, const Actor& actor, const auth::KeyInfo& key) {
  nlohmann::json detail = {{"user", key.user}, {"role", key.role}, {"name", key.name}};
  if (!actor.via.empty()) detail["via"] = actor.via;
  return {.kind = kind, .actor = actor.user, .target = key.id, .detail = std::move(detail)};
}

}  // namespace

StatusOr<auth::NewKey> CreateKey(auth::KeyStore& keys, audit::AuditLog& log, const Actor& actor,
                                 const std::string& user, const std::string& role, const std::string& name) {
  AIRLOCK_ASSIGN_OR_RETURN(auth::NewKey k, keys.Create(user, role, name));
  if (Status st = log.Event(KeyEvent("key_create", actor, k.info)); !st.ok()) {
    // Fail closed: a key that is not on record must not be usable. Its
    // secret was never shown; revoke it at once.
    Status revoked = keys.Revoke(k.info.id);
    return Unavailable(st.message() + "; key " + k.info.id +
                       (revoked.ok() ? " was revoked at once" : " could NOT be revoked: " + revoked.message()) +
                       " (audit.fail_closed)");
  }
  return k;
}

StatusOr<auth::KeyInfo> RevokeKey(auth::KeyStore& keys, audit::AuditLog& log, const Actor& actor,
                                  const std::string& id) {
  auth::KeyInfo key;
  key.id = id;
  if (StatusOr<std::vector<auth::KeyInfo>> list = keys.List(); list.ok()) {
    for (const auth::KeyInfo& k : *list) {
      if (k.id == id) key = k;
    }
  }
  AIRLOCK_RETURN_IF_ERROR(keys.Revoke(id));
  if (Status logged = log.Event(KeyEvent("key_revoke", actor, key)); !logged.ok()) {
    return Unavailable("key " + id + " revoked, but " + logged.message());
  }
  if (StatusOr<std::vector<auth::KeyInfo>> list = keys.List(); list.ok()) {
    for (const auth::KeyInfo& k : *list) {
      if (k.id == id) key = k;
    }
  }
  return key;
}

nlohmann::json ToJson(const auth::KeyInfo& k) {
  return {{"id", k.id},     {"name", k.name},           {"user", k.user},
          {"role", k.role}, {"created_at", k.created_at}, {"revoked_at", k.revoked_at}};
}

}  // namespace airlock::admin
