// Creating and revoking API keys with their audit events: one
// implementation for `airlock keys create|revoke` and the console's
// /console/api/keys, so both keep the same record.
//
//  - create: the key is made, then the event "key_create" {user, role, name,
//    via} is written; if that write fails (audit.fail_closed) the new key is
//    revoked at once and its secret never shown: Unavailable.
//  - revoke: the key is revoked first (a revocation stands even if it
//    cannot be recorded), then "key_revoke"; an unrecorded revocation is
//    reported as Unavailable with the key already revoked.
//
//   AIRLOCK_ASSIGN_OR_RETURN(auth::NewKey k, CreateKey(keys, log, {"alice", "console"}, "bob", "analyst", "ci"));
//   AIRLOCK_ASSIGN_OR_RETURN(auth::KeyInfo gone, RevokeKey(keys, log, {"alice", "cli"}, k.info.id));
#ifndef AIRLOCK_ADMIN_KEY_ADMIN_H_
#define AIRLOCK_ADMIN_KEY_ADMIN_H_

#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "auth/key_store.h"
#include "base/status.h"

namespace airlock::admin {

struct Actor {
  std::string user;  // who acts (recorded)
  std::string via;   // "cli" | "console"
};

StatusOr<auth::NewKey> CreateKey(auth::KeyStore& keys, audit::AuditLog& log, const Actor& actor,
                                 const std::string& user, const std::string& role, const std::string& name);

// NotFound if there is no such key; revoking a revoked key is OK.
StatusOr<auth::KeyInfo> RevokeKey(auth::KeyStore& keys, audit::AuditLog& log, const Actor& actor,
                                  const std::string& id);

// {id, name, user, role, created_at, revoked_at} (never a secret or hash).
nlohmann::json ToJson(const auth::KeyInfo& key);

}  // namespace airlock::admin

#endif  // AIRLOCK_ADMIN_KEY_ADMIN_H_
