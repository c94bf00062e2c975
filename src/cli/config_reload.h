// SIGHUP for `airlock serve --http` (issue 19): re-read the configuration
// and say what it would change. API keys need no reload: the key store is
// re-read whenever its file changes, so a created or revoked key counts from
// the next request (SIGHUP re-reads it at once and reports the count). The
// configuration itself is read at start only: every changed key is named
// as needing a restart, and a file that no longer parses changes nothing.
// The HTTPS listener's certificate and key (server.http.tls) are re-read
// from their files: new connections get them, open ones keep theirs, and
// files that do not load leave the old pair in force (a warning).
//
//   for (;;) {
//     sigwait(&signals, &sig);
//     if (sig != SIGHUP) break;
//     ReloadTls(tls);  // when serving HTTPS
//     ReportReload(config_path, overrides, running_config, keys);
//   }
#ifndef AIRLOCK_CLI_CONFIG_RELOAD_H_
#define AIRLOCK_CLI_CONFIG_RELOAD_H_

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/key_store.h"
#include "config/config.h"
#include "mcp/tls_context.h"

namespace airlock::cli {

// Dotted paths ("server.http.listen", "roles.dev") whose values differ
// between two ConfigToJson() trees; objects are compared key by key.
std::vector<std::string> ChangedKeys(const nlohmann::json& before, const nlohmann::json& after);

// Re-reads `config_path` (applying `overrides`, e.g. the command line's
// --http) and the key store (may be null), and writes what it found to
// stderr: the keys in force, and each changed config key as needing a restart.
void ReportReload(const std::string& config_path, const std::function<void(config::Config&)>& overrides,
                  const config::Config& running, auth::KeyStore* keys);

// Re-reads the HTTPS certificate and key (`tls` not null) and writes to
// stderr what is in force now, or, as a warning, why the old pair stays.
void ReloadTls(mcp::TlsCredentials* tls);

}  // namespace airlock::cli

#endif  // AIRLOCK_CLI_CONFIG_RELOAD_H_
