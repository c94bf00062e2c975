#include "cli/config_reload.h"

#include <iostream>

#include "cli/executor_factory.h"

namespace airlock::cli {

using nlohmann::json;

namespace {

void Diff(const json& a, const json& b, const std::string& path, std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const std::string p = path.empty() ? key : path + "." + key;
      if (!b.contains(key)) {
        out.push_back(p);
      } else {
        Diff(value, b.at(key), p, out);
      }
    }
    for (const auto& [key, value] : b.items()) {
      if (!a.contains(key)) out.push_back(path.empty() ? key : path + "." + key);
    }
    return;
  }
  if (a != b) out.push_back(path.empty() ? "(the whole configuration)" : path);
}

}  // namespace

std::vector<std::string> ChangedKeys(const json& before, const json& after) {
  std::vector<std::string> out;
  Diff(before, after, "", out);
  return out;
}

void ReportReload(const std::string& config_path, const std::function<void(config::Config&)>& overrides,
                  const config::Config& running, auth::KeyStore* keys) {
  // A reload that changes nothing because something is broken is a warning
  // ("warning:" sets the level in --log-format json, base/json_log_relay.h).
  std::string line = "airlock: SIGHUP: ";
  bool broken = false;
  if (keys != nullptr) {
    StatusOr<std::vector<auth::KeyInfo>> list = keys->List();
    if (list.ok()) {
      size_t active = 0;
      for (const auth::KeyInfo& k : *list) active += k.revoked_at == 0 ? 1 : 0;
      line += "API keys re-read (" + std::to_string(active) + " active; they always count from the next request); ";
    } else {
      line += "API keys could not be re-read (" + list.status().message() + "; every key is refused until they can); ";
      broken = true;
    }
  }
  StatusOr<config::Config> fresh = LoadConfigOrDefault(config_path);
  auto warn_if_broken = [&] { return broken ? "airlock: warning: SIGHUP: " + line.substr(17) : line; };
  if (!fresh.ok()) {
    broken = true;
    std::cerr << warn_if_broken() << "the configuration has errors, nothing changes: " << fresh.status().message()
              << std::endl;
    return;
  }
  if (overrides) overrides(*fresh);
  const std::vector<std::string> changed = ChangedKeys(config::ConfigToJson(running), config::ConfigToJson(*fresh));
  if (changed.empty()) {
    std::cerr << warn_if_broken() << "the configuration is unchanged" << std::endl;
    return;
  }
  std::string names;
  for (const std::string& k : changed) names += (names.empty() ? "" : ", ") + k;
  std::cerr << warn_if_broken() << "these configuration changes need a restart to take effect: " << names
            << std::endl;
}

void ReloadTls(mcp::TlsCredentials* tls) {
  if (Status st = tls->Reload(); !st.ok()) {
    std::cerr << "airlock: warning: SIGHUP: the TLS certificate was not reloaded, the old one stays ("
              << tls->Current()->description() << "): " << st.message() << std::endl;
    return;
  }
  std::cerr << "airlock: SIGHUP: TLS certificate reloaded, new connections get " << tls->Current()->description()
            << std::endl;
}

}  // namespace airlock::cli
