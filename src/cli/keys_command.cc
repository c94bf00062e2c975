// `airlock keys create|list|revoke`. Create and revoke are recorded in the
// audit log (events key_create / key_revoke, never the secret); with
// audit.fail_closed an unwritable log refuses them. The keys are where the
// config's state.backend keeps them (state/state_stores.h): --file, else
// server.http.keys_file, else <state dir>/keys.json; or the database.
#include <pwd.h>
#include <unistd.h>

#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/key_admin.h"
#include "audit/audit_log.h"
#include "auth/key_store.h"
#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "state/state_stores.h"

namespace airlock::cli {
namespace {

// --as, else the name of the effective OS user ("uid:N" if it has none).
std::string Actor(const KeysOptions& options) {
  if (!options.actor.empty()) return options.actor;
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return "uid:" + std::to_string(geteuid());
}

int Create(const KeysOptions& options, auth::KeyStore& store, audit::AuditLog& log) {
  StatusOr<auth::NewKey> k =
      admin::CreateKey(store, log, {Actor(options), "cli"}, options.user, options.role, options.name);
  if (!k.ok()) {
    std::cerr << "airlock keys: " << k.status().message() << "\n";
    return k.status().code() == StatusCode::kUnavailable ? 1 : 2;
  }
  if (options.json) {
    nlohmann::json j = admin::ToJson(k->info);
    j["secret"] = k->secret;
    std::cout << j.dump(2) << std::endl;
  } else {
    std::cout << k->secret << std::endl;
    std::cerr << "key " << k->info.id << " for " << k->info.user << " (role " << k->info.role
              << "); the secret above is shown only now\n";
  }
  return 0;
}

int List(const KeysOptions& options, auth::KeyStore& store) {
  StatusOr<std::vector<auth::KeyInfo>> list = store.List();
  if (!list.ok()) {
    std::cerr << "airlock keys: " << list.status().message() << "\n";
    return 1;
  }
  nlohmann::json j = nlohmann::json::array();
  for (const auth::KeyInfo& k : *list) j.push_back(admin::ToJson(k));
  if (options.json) {
    std::cout << j.dump(2) << std::endl;
  } else {
    for (const auth::KeyInfo& k : *list) {
      std::cout << k.id << "  " << k.user << "  " << k.role << "  " << (k.revoked_at ? "revoked" : "active")
                << (k.name.empty() ? "" : "  " + k.name) << "\n";
    }
  }
  return 0;
}

int Revoke(const KeysOptions& options, auth::KeyStore& store, audit::AuditLog& log) {
  StatusOr<auth::KeyInfo> k = admin::RevokeKey(store, log, {Actor(options), "cli"}, options.id);
  if (!k.ok()) {
    std::cerr << "airlock keys: " << k.status().message() << "\n";
    return k.status().code() == StatusCode::kNotFound ? 2 : 1;
  }
  std::cerr << "key " << options.id << " revoked\n";
  return 0;
}

}  // namespace

int KeysCommand(const KeysOptions& options) {
  StatusOr<config::Config> cfg = LoadConfigOrDefault(options.config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock keys: " << cfg.status().message() << "\n";
    return 2;
  }
  if (!options.file.empty()) {
    if (state::UsesPostgres(*cfg)) {
      std::cerr << "airlock keys: --file does not apply: the config's state.backend is \"postgres\" "
                   "(the keys are in the database)\n";
      return 2;
    }
    cfg->server.http.keys_file = options.file;
  }
  std::unique_ptr<audit::AuditLog> log;
  if (options.action != "list") {
    // Opened before the key store is touched: with fail_closed, no log, no change.
    StatusOr<std::unique_ptr<audit::AuditLog>> opened = audit::AuditLog::Open(*cfg);
    if (!opened.ok()) {
      std::cerr << "airlock keys: " << opened.status().message()
                << "; refusing to change keys (audit.fail_closed)\n";
      return 1;
    }
    log = std::move(*opened);
  }
  StatusOr<std::unique_ptr<auth::KeyStore>> store = state::OpenKeyStore(*cfg);
  if (!store.ok()) {
    std::cerr << "airlock keys: " << store.status().message() << "\n";
    return 1;
  }
  if (options.action == "list") return List(options, **store);
  if (options.action == "create") return Create(options, **store, *log);
  return Revoke(options, **store, *log);
}

}  // namespace airlock::cli
