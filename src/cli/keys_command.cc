// `airlock keys create|list|revoke`.
#include <iostream>

#include <nlohmann/json.hpp>

#include "auth/key_store.h"
#include "cli/commands.h"

namespace airlock::cli {
namespace {

nlohmann::json ToJson(const auth::KeyInfo& k) {
  return {{"id", k.id},         {"name", k.name},          {"user", k.user},
          {"role", k.role},     {"created_at", k.created_at}, {"revoked_at", k.revoked_at}};
}

}  // namespace

int KeysCommand(const KeysOptions& options) {
  StatusOr<std::unique_ptr<auth::KeyStore>> store = auth::KeyStore::Open(options.file);
  if (!store.ok()) {
    std::cerr << "airlock keys: " << store.status().message() << "\n";
    return 1;
  }
  if (options.action == "create") {
    StatusOr<auth::NewKey> k = (*store)->Create(options.user, options.role, options.name);
    if (!k.ok()) {
      std::cerr << "airlock keys: " << k.status().message() << "\n";
      return 2;
    }
    if (options.json) {
      nlohmann::json j = ToJson(k->info);
      j["secret"] = k->secret;
      std::cout << j.dump(2) << std::endl;
    } else {
      std::cout << k->secret << std::endl;
      std::cerr << "key " << k->info.id << " for " << k->info.user << " (role " << k->info.role
                << "); the secret above is shown only now\n";
    }
    return 0;
  }
  if (options.action == "list") {
    StatusOr<std::vector<auth::KeyInfo>> list = (*store)->List();
    if (!list.ok()) {
      std::cerr << "airlock keys: " << list.status().message() << "\n";
      return 1;
    }
    nlohmann::json j = nlohmann::json::array();
    for (const auth::KeyInfo& k : *list) j.push_back(ToJson(k));
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
  Status st = (*store)->Revoke(options.id);
  if (!st.ok()) {
    std::cerr << "airlock keys: " << st.message() << "\n";
    return st.code() == StatusCode::kNotFound ? 2 : 1;
  }
  std::cerr << "key " << options.id << " revoked\n";
  return 0;
}

}  // namespace airlock::cli
