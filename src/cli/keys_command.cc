// `airlock keys create|list|revoke`. Create and revoke are recorded in the
// audit log (events key_create / key_revoke, never the secret); with
// audit.fail_closed an unwritable log refuses them. The keys are where the
// config's state.backend keeps them (state/state_stores.h): --file, else
// server.http.keys_file, else <state dir>/keys.json; or the database.
//
// `create` refuses a role the config does not define (exit 2, naming the
// roles it does), and warns on stderr when the config does not make the
// HTTP server check API keys (neither server.http.api_keys nor a keys_file):
// such a key is stored, but nothing asks for it until keys are turned on.
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/key_admin.h"
#include "audit/audit_log.h"
#include "auth/key_store.h"
#include "cli/commands.h"
#include "base/terminal_text.h"
#include "cli/executor_factory.h"
#include "governance/policy.h"
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

// The role must be one the config defines (config "roles", plus the
// built-in reader and admin): a key for an undefined role sees nothing.
Status CheckRole(const config::Config& cfg, const std::string& role) {
  StatusOr<governance::Policy> policy = governance::Policy::FromJson(cfg.roles, cfg.endpoints, cfg.access);
  if (!policy.ok()) return InvalidArgument("configuration: " + policy.status().message());
  if (policy->FindRole(role) != nullptr) return OkStatus();
  std::string names;
  for (const std::string& n : policy->role_names()) names += (names.empty() ? "" : ", ") + n;
  return InvalidArgument("--role " + TerminalText(role) + ": no such role in the configuration; the roles are: " +
                         names);
}

// A loud warning on stderr when a server run with `cfg` (as loaded, before
// --file) would not check the key being created.
void WarnIfKeysAreNotChecked(const config::Config& cfg, const KeysOptions& options) {
  if (!state::ApiKeysEnabled(cfg)) {
    std::cerr << "airlock keys: WARNING: this configuration does not check API keys "
                 "(neither server.http.api_keys nor server.http.keys_file is set"
              << (options.config_path.empty() ? ", and no --config was given" : "")
              << "): the key is stored, but `airlock serve --http` with this configuration does not ask for it; "
                 "set server.http.keys_file (or api_keys) to require keys\n";
    return;
  }
  if (!options.file.empty() && !state::UsesPostgres(cfg)) {
    std::error_code ec1, ec2;
    const auto given = std::filesystem::weakly_canonical(options.file, ec1);
    const auto used = std::filesystem::weakly_canonical(state::KeysFilePath(cfg), ec2);
    if (ec1 || ec2 || given != used) {
      std::cerr << "airlock keys: WARNING: --file " << TerminalText(options.file)
                << " is not the key file this configuration's server checks (" << TerminalText(state::KeysFilePath(cfg))
                << ")\n";
    }
  }
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
    std::cerr << "key " << k->info.id << " for " << TerminalText(k->info.user) << " (role "
              << TerminalText(k->info.role) << "); the secret above is shown only now\n";
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
      std::cout << TerminalText(k.id) << "  " << TerminalText(k.user) << "  " << TerminalText(k.role) << "  "
                << (k.revoked_at ? "revoked" : "active") << (k.name.empty() ? "" : "  " + TerminalText(k.name))
                << "\n";
    }
  }
  return 0;
}

int Revoke(const KeysOptions& options, auth::KeyStore& store, audit::AuditLog& log) {
  StatusOr<auth::KeyInfo> k = admin::RevokeKey(store, log, {Actor(options), "cli"}, options.id);
  if (!k.ok()) {
    std::cerr << "airlock keys: " << TerminalText(k.status().message()) << "\n";
    return k.status().code() == StatusCode::kNotFound ? 2 : 1;
  }
  std::cerr << "key " << TerminalText(options.id) << " revoked\n";
  return 0;
}

}  // namespace

int KeysCommand(const KeysOptions& options) {
  StatusOr<config::Config> cfg = LoadConfigOrDefault(options.config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock keys: " << cfg.status().message() << "\n";
    return 2;
  }
  if (options.action == "create") {
    if (Status st = CheckRole(*cfg, options.role); !st.ok()) {
      std::cerr << "airlock keys: " << st.message() << "\n";
      return 2;
    }
  }
  const config::Config original = *cfg;  // as a server would read it: before --file
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
  if (options.action == "create") {
    WarnIfKeysAreNotChecked(original, options);
    return Create(options, **store, *log);
  }
  return Revoke(options, **store, *log);
}

}  // namespace airlock::cli
