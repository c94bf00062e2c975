#include "config/config.h"

#include <algorithm>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "runtimes/language.h"
#include "runtimes/package_dirs.h"

namespace airlock::config {
namespace {

using nlohmann::json;

// languages.enabled names languages airlock knows (runtimes::BuiltinLanguages;
// the WASM tier's are among them): a misspelt or unknown one is an error, not
// a language silently never offered.
Status CheckLanguageNames(const std::vector<std::string>& names, const std::string& path) {
  std::vector<std::string> known;
  for (const runtimes::LanguageSpec& spec : runtimes::BuiltinLanguages()) known.push_back(spec.name);
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::find(known.begin(), known.end(), names[i]) != known.end()) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return InvalidArgument(path + "[" + std::to_string(i) + "]: unknown language \"" + names[i].substr(0, 64) +
                           "\"; the languages are: " + list);
  }
  return OkStatus();
}

// An endpoint's "packages" names configured package directories ("*": all,
// also for an endpoint that names none and for the implicit default one),
// and a run gets at most kMaxPackageDirsPerRun of its language's: more
// would make every such run fail, so the config is refused instead. The
// list's shape is the policy's to check (governance/policy.cc).
Status CheckEndpointPackages(const Config& c) {
  std::vector<std::pair<std::string, json>> selections;  // endpoint key path, its "packages"
  if (c.endpoints.is_object() && !c.endpoints.empty()) {
    for (const auto& [name, e] : c.endpoints.items()) {
      const bool named = e.is_object() && e.contains("packages");
      selections.emplace_back("config.endpoints." + name + ".packages", named ? e["packages"] : json::array({"*"}));
    }
  } else {
    selections.emplace_back("config.languages.packages (the default endpoint has them all)", json::array({"*"}));
  }
  for (const auto& [path, list] : selections) {
    if (!list.is_array()) continue;
    std::set<std::string> chosen;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) continue;
      const std::string n = list[i].get<std::string>();
      if (n == "*") {
        for (const auto& [name, d] : c.languages.packages) chosen.insert(name);
      } else if (c.languages.packages.count(n)) {
        chosen.insert(n);
      } else {
        return InvalidArgument(path + "[" + std::to_string(i) + "]: \"" + n.substr(0, 40) +
                               "\" is not a package directory of languages.packages");
      }
    }
    std::map<std::string, size_t> per_language;
    for (const std::string& name : chosen) {
      const std::string& language = c.languages.packages.at(name).language;
      if (++per_language[language] > runtimes::kMaxPackageDirsPerRun) {
        return InvalidArgument(path + ": more than " + std::to_string(runtimes::kMaxPackageDirsPerRun) + " " +
                               language + " package directories; a run's jail takes at most " +
                               std::to_string(runtimes::kMaxPackageDirsPerRun) + " (name fewer)");
      }
    }
  }
  return OkStatus();
}

// Reads the keys of one JSON object, remembering the dotted path for errors.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  // The value must be an object whose keys are all in `known`.
  Status Check(const std::set<std::string>& known) const {
    if (!j_.is_object()) return InvalidArgument(path_ + ": expected an object");
    for (const auto& [key, value] : j_.items()) {
      if (!known.count(key)) {
        return InvalidArgument(path_ + ": unknown key \"" + key + "\"");
      }
    }
    return OkStatus();
  }

  bool Has(const std::string& key) const { return j_.contains(key); }
  const json& Get(const std::string& key) const { return j_.at(key); }
  std::string PathOf(const std::string& key) const { return path_ + "." + key; }

  Status U64(const std::string& key, uint64_t* out, uint64_t min, uint64_t max) const {
    if (!Has(key)) return OkStatus();
    const json& v = Get(key);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      return InvalidArgument(PathOf(key) + ": expected a non-negative integer");
    }
    uint64_t x = v.get<uint64_t>();
    if (x < min || x > max) {
      return InvalidArgument(PathOf(key) + ": " + std::to_string(x) + " is out of range [" +
                             std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    *out = x;
    return OkStatus();
  }

  Status Int(const std::string& key, int* out, int min, int max) const {
    uint64_t x = static_cast<uint64_t>(*out);
    AIRLOCK_RETURN_IF_ERROR(U64(key, &x, static_cast<uint64_t>(min), static_cast<uint64_t>(max)));
    *out = static_cast<int>(x);
    return OkStatus();
  }

  // A string, or null (which leaves the empty string).
  Status Str(const std::string& key, std::string* out) const {
    if (!Has(key)) return OkStatus();
    const json& v = Get(key);
    if (v.is_null()) {
      out->clear();
      return OkStatus();
    }
    if (!v.is_string()) return InvalidArgument(PathOf(key) + ": expected a string or null");
    *out = v.get<std::string>();
    return OkStatus();
  }

  Status StrList(const std::string& key, std::vector<std::string>* out) const {
    if (!Has(key)) return OkStatus();
    const json& v = Get(key);
    if (!v.is_array()) return InvalidArgument(PathOf(key) + ": expected an array of strings");
    out->clear();
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        return InvalidArgument(PathOf(key) + "[" + std::to_string(i) + "]: expected a string");
      }
      out->push_back(v[i].get<std::string>());
    }
    return OkStatus();
  }

  Status Bool(const std::string& key, bool* out) const {
    if (!Has(key)) return OkStatus();
    if (!Get(key).is_boolean()) return InvalidArgument(PathOf(key) + ": expected true or false");
    *out = Get(key).get<bool>();
    return OkStatus();
  }

  // A nested object; absent yields an empty object reader.
  ObjectReader Child(const std::string& key) const {
    static const json kEmpty = json::object();
    return ObjectReader(Has(key) ? Get(key) : kEmpty, PathOf(key));
  }

 private:
  const json& j_;
  std::string path_;
};

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

Status ReadConsoleSso(const ObjectReader& r, ConsoleSsoConfig* c) {
  AIRLOCK_RETURN_IF_ERROR(r.Check({"issuer", "client_id", "client_secret_file", "redirect_uri", "scopes",
                                   "provider_name", "admin_claim", "admin_values", "role", "allow_key_signin"}));
  AIRLOCK_RETURN_IF_ERROR(r.Str("issuer", &c->issuer));
  AIRLOCK_RETURN_IF_ERROR(r.Str("client_id", &c->client_id));
  AIRLOCK_RETURN_IF_ERROR(r.Str("client_secret_file", &c->client_secret_file));
  AIRLOCK_RETURN_IF_ERROR(r.Str("redirect_uri", &c->redirect_uri));
  AIRLOCK_RETURN_IF_ERROR(r.Str("scopes", &c->scopes));
  AIRLOCK_RETURN_IF_ERROR(r.Str("provider_name", &c->provider_name));
  AIRLOCK_RETURN_IF_ERROR(r.Str("admin_claim", &c->admin_claim));
  AIRLOCK_RETURN_IF_ERROR(r.StrList("admin_values", &c->admin_values));
  AIRLOCK_RETURN_IF_ERROR(r.Str("role", &c->role));
  AIRLOCK_RETURN_IF_ERROR(r.Bool("allow_key_signin", &c->allow_key_signin));
  if (c->issuer.empty()) {
    if (!c->client_id.empty() || !c->client_secret_file.empty()) {
      return InvalidArgument(r.PathOf("issuer") + ": required when console.sso is configured");
    }
    return OkStatus();
  }
  const bool https = c->issuer.rfind("https://", 0) == 0;
  const bool loopback = c->issuer.rfind("http://127.0.0.1", 0) == 0 || c->issuer.rfind("http://localhost", 0) == 0 ||
                        c->issuer.rfind("http://[::1]", 0) == 0;
  if (!https && !loopback) return InvalidArgument(r.PathOf("issuer") + ": expected an https:// URL");
  if (c->client_id.empty()) return InvalidArgument(r.PathOf("client_id") + ": required with console.sso.issuer");
  if (c->client_secret_file.empty()) {
    return InvalidArgument(r.PathOf("client_secret_file") + ": required with console.sso.issuer");
  }
  if (c->admin_claim.empty()) return InvalidArgument(r.PathOf("admin_claim") + ": must not be empty");
  if (c->admin_values.empty()) {
    return InvalidArgument(r.PathOf("admin_values") + ": name at least one value that makes a user an administrator");
  }
  if (c->scopes.find("openid") == std::string::npos) {
    return InvalidArgument(r.PathOf("scopes") + ": must include \"openid\"");
  }
  if (!c->redirect_uri.empty() && c->redirect_uri.rfind("https://", 0) != 0 &&
      c->redirect_uri.rfind("http://", 0) != 0) {
    return InvalidArgument(r.PathOf("redirect_uri") + ": expected an http(s):// URL");
  }
  return OkStatus();
}

Status ReadConsole(const ObjectReader& r, HttpConfig* c) {
  AIRLOCK_RETURN_IF_ERROR(r.Check({"enabled", "path", "idle_timeout_s", "max_lifetime_s", "https",
                                   "signin_max_failures", "signin_window_s", "sso"}));
  AIRLOCK_RETURN_IF_ERROR(ReadConsoleSso(r.Child("sso"), &c->console_sso));
  AIRLOCK_RETURN_IF_ERROR(r.U64("signin_max_failures", &c->console_signin_max_failures, 1, 1000));
  AIRLOCK_RETURN_IF_ERROR(r.U64("signin_window_s", &c->console_signin_window_s, 1, 86400));
  AIRLOCK_RETURN_IF_ERROR(r.Bool("https", &c->console_https));
  AIRLOCK_RETURN_IF_ERROR(r.Bool("enabled", &c->console_enabled));
  AIRLOCK_RETURN_IF_ERROR(r.Str("path", &c->console_path));
  const std::string& p = c->console_path;
  bool ok = p.size() >= 2 && p.size() <= 33 && p[0] == '/';
  for (size_t i = 1; ok && i < p.size(); ++i) {
    ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_' || p[i] == '-';
  }
  if (!ok) return InvalidArgument(r.PathOf("path") + ": expected \"/\" and 1-32 of [a-z0-9_-], e.g. \"/console\"");
  AIRLOCK_RETURN_IF_ERROR(r.U64("idle_timeout_s", &c->console_idle_timeout_s, 60, 86400));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_lifetime_s", &c->console_max_lifetime_s, 60, 7 * 86400));
  return OkStatus();
}

Status ReadIntrospection(const ObjectReader& r, OAuthIntrospectionConfig* c) {
  AIRLOCK_RETURN_IF_ERROR(r.Check({"endpoint", "client_id", "client_secret_file", "client_secret_env", "all_tokens",
                                   "cache_s", "cache_max_entries", "max_per_minute"}));
  AIRLOCK_RETURN_IF_ERROR(r.Str("endpoint", &c->endpoint));
  AIRLOCK_RETURN_IF_ERROR(r.Str("client_id", &c->client_id));
  AIRLOCK_RETURN_IF_ERROR(r.Str("client_secret_file", &c->client_secret_file));
  AIRLOCK_RETURN_IF_ERROR(r.Str("client_secret_env", &c->client_secret_env));
  AIRLOCK_RETURN_IF_ERROR(r.Bool("all_tokens", &c->all_tokens));
  AIRLOCK_RETURN_IF_ERROR(r.U64("cache_s", &c->cache_s, 0, 300));
  AIRLOCK_RETURN_IF_ERROR(r.U64("cache_max_entries", &c->cache_max_entries, 1, 1'000'000));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_per_minute", &c->max_per_minute, 1, 1'000'000));
  const bool has_file = !c->client_secret_file.empty();
  const bool has_env = !c->client_secret_env.empty();
  if (!c->client_id.empty() && has_file == has_env) {
    return InvalidArgument(r.PathOf("client_id") + ": give exactly one of client_secret_file and client_secret_env");
  }
  if (c->client_id.empty() && (has_file || has_env || !c->endpoint.empty() || c->all_tokens)) {
    return InvalidArgument(r.PathOf("client_id") + ": required for introspection (airlock's client at the server)");
  }
  return OkStatus();
}

Status ReadOAuth(const ObjectReader& r, OAuthConfig* c) {
  AIRLOCK_RETURN_IF_ERROR(r.Check({"issuer", "resource", "authorization_servers", "jwks_uri", "scopes_supported",
                                   "required_scope", "role_rules", "jwks_refresh_min_s", "clock_skew_s",
                                   "max_token_bytes", "behind_tls_proxy", "introspection"}));
  AIRLOCK_RETURN_IF_ERROR(ReadIntrospection(r.Child("introspection"), &c->introspection));
  AIRLOCK_RETURN_IF_ERROR(r.Str("issuer", &c->issuer));
  AIRLOCK_RETURN_IF_ERROR(r.Str("resource", &c->resource));
  AIRLOCK_RETURN_IF_ERROR(r.StrList("authorization_servers", &c->authorization_servers));
  AIRLOCK_RETURN_IF_ERROR(r.Str("jwks_uri", &c->jwks_uri));
  AIRLOCK_RETURN_IF_ERROR(r.StrList("scopes_supported", &c->scopes_supported));
  AIRLOCK_RETURN_IF_ERROR(r.Str("required_scope", &c->required_scope));
  AIRLOCK_RETURN_IF_ERROR(r.U64("jwks_refresh_min_s", &c->jwks_refresh_min_s, 1, 86400));
  AIRLOCK_RETURN_IF_ERROR(r.U64("clock_skew_s", &c->clock_skew_s, 0, 600));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_token_bytes", &c->max_token_bytes, 256, 65536));
  AIRLOCK_RETURN_IF_ERROR(r.Bool("behind_tls_proxy", &c->behind_tls_proxy));
  if (r.Has("role_rules")) {
    const json& rules = r.Get("role_rules");
    if (!rules.is_array()) return InvalidArgument(r.PathOf("role_rules") + ": expected an array of objects");
    c->role_rules.clear();
    for (size_t i = 0; i < rules.size(); ++i) {
      ObjectReader rule(rules[i], r.PathOf("role_rules") + "[" + std::to_string(i) + "]");
      AIRLOCK_RETURN_IF_ERROR(rule.Check({"scope", "claim", "value", "role"}));
      OAuthRoleRule out;
      AIRLOCK_RETURN_IF_ERROR(rule.Str("scope", &out.scope));
      AIRLOCK_RETURN_IF_ERROR(rule.Str("claim", &out.claim));
      AIRLOCK_RETURN_IF_ERROR(rule.Str("value", &out.value));
      AIRLOCK_RETURN_IF_ERROR(rule.Str("role", &out.role));
      if (out.role.empty()) return InvalidArgument(rule.PathOf("role") + ": required");
      if (out.scope.empty() && out.claim.empty()) {
        return InvalidArgument(r.PathOf("role_rules") + "[" + std::to_string(i) + "]: give a scope, a claim, or both");
      }
      if (!out.claim.empty() && out.value.empty()) return InvalidArgument(rule.PathOf("value") + ": required with claim");
      c->role_rules.push_back(std::move(out));
    }
  }
  if (c->issuer.empty() && !c->introspection.client_id.empty()) {
    return InvalidArgument(r.PathOf("introspection") + ": needs issuer (OAuth is off without it)");
  }
  if (!c->issuer.empty() && c->resource.empty()) {
    return InvalidArgument(r.PathOf("resource") + ": required when issuer is set (this server's canonical URI)");
  }
  return OkStatus();
}

Status ReadHttpTls(const ObjectReader& r, HttpConfig::Tls* c) {
  AIRLOCK_RETURN_IF_ERROR(r.Check({"cert_file", "key_file", "min_version"}));
  AIRLOCK_RETURN_IF_ERROR(r.Str("cert_file", &c->cert_file));
  AIRLOCK_RETURN_IF_ERROR(r.Str("key_file", &c->key_file));
  AIRLOCK_RETURN_IF_ERROR(r.Str("min_version", &c->min_version));
  if (c->cert_file.empty() != c->key_file.empty()) {
    return InvalidArgument(r.PathOf(c->cert_file.empty() ? "cert_file" : "key_file") +
                           ": cert_file and key_file go together (both set: HTTPS; neither: plain HTTP)");
  }
  if (c->min_version != "1.2" && c->min_version != "1.3") {
    return InvalidArgument(r.PathOf("min_version") + ": expected \"1.2\" or \"1.3\"");
  }
  return OkStatus();
}

Status ReadHttp(const ObjectReader& r, HttpConfig* c) {
  AIRLOCK_RETURN_IF_ERROR(r.Check({"listen", "allowed_origins", "allowed_hosts", "token_file", "keys_file", "api_keys",
                                   "metrics_token_file", "session_idle_timeout_s", "threads", "max_sessions", "console",
                                   "body_timeout_s", "body_min_rate", "oauth", "tls"}));
  AIRLOCK_RETURN_IF_ERROR(ReadOAuth(r.Child("oauth"), &c->oauth));
  AIRLOCK_RETURN_IF_ERROR(ReadHttpTls(r.Child("tls"), &c->tls));
  AIRLOCK_RETURN_IF_ERROR(r.U64("body_timeout_s", &c->body_timeout_s, 1, 3600));
  AIRLOCK_RETURN_IF_ERROR(r.U64("body_min_rate", &c->body_min_rate, 0, 1ull << 30));
  AIRLOCK_RETURN_IF_ERROR(r.Str("listen", &c->listen));
  if (r.Has("listen")) {
    std::string host;
    int port;
    Status st = ParseListenAddress(c->listen, &host, &port);
    if (!st.ok()) return InvalidArgument(r.PathOf("listen") + ": " + st.message());
  }
  AIRLOCK_RETURN_IF_ERROR(r.StrList("allowed_origins", &c->allowed_origins));
  AIRLOCK_RETURN_IF_ERROR(r.StrList("allowed_hosts", &c->allowed_hosts));
  AIRLOCK_RETURN_IF_ERROR(r.Str("token_file", &c->token_file));
  AIRLOCK_RETURN_IF_ERROR(r.Str("keys_file", &c->keys_file));
  AIRLOCK_RETURN_IF_ERROR(r.Bool("api_keys", &c->api_keys));
  AIRLOCK_RETURN_IF_ERROR(r.Str("metrics_token_file", &c->metrics_token_file));
  AIRLOCK_RETURN_IF_ERROR(r.U64("session_idle_timeout_s", &c->session_idle_timeout_s, 1, 7 * 86400));
  AIRLOCK_RETURN_IF_ERROR(r.Int("threads", &c->threads, 2, 1024));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_sessions", &c->max_sessions, 1, 1000000));
  return ReadConsole(r.Child("console"), c);
}

Status ReadServer(const ObjectReader& r, ServerConfig* c) {
  AIRLOCK_RETURN_IF_ERROR(
      r.Check({"http", "max_message_bytes", "max_concurrent_runs", "max_queued_runs", "max_concurrent_runs_per_caller",
               "max_queued_runs_per_caller", "state_dir", "shutdown_grace_s", "readyz_requires_connectors"}));
  AIRLOCK_RETURN_IF_ERROR(r.Str("state_dir", &c->state_dir));
  AIRLOCK_RETURN_IF_ERROR(ReadHttp(r.Child("http"), &c->http));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_message_bytes", &c->max_message_bytes, 1024, 1ull << 30));
  AIRLOCK_RETURN_IF_ERROR(r.Int("max_concurrent_runs", &c->max_concurrent_runs, 0, 4096));
  AIRLOCK_RETURN_IF_ERROR(r.Int("max_queued_runs", &c->max_queued_runs, 0, 100000));
  AIRLOCK_RETURN_IF_ERROR(r.Int("max_concurrent_runs_per_caller", &c->max_concurrent_runs_per_caller, 0, 4096));
  AIRLOCK_RETURN_IF_ERROR(r.Int("max_queued_runs_per_caller", &c->max_queued_runs_per_caller, 0, 100000));
  AIRLOCK_RETURN_IF_ERROR(r.U64("shutdown_grace_s", &c->shutdown_grace_s, 0, 3600));
  AIRLOCK_RETURN_IF_ERROR(r.Bool("readyz_requires_connectors", &c->readyz_requires_connectors));
  return OkStatus();
}

Status ReadLimits(const ObjectReader& r, LimitsConfig* c) {
  AIRLOCK_RETURN_IF_ERROR(r.Check({"default_timeout_ms", "max_timeout_ms", "default_memory_mb",
                                   "max_memory_mb", "max_output_bytes", "max_files",
                                   "max_file_bytes", "max_total_file_bytes", "max_output_files_total_bytes"}));
  AIRLOCK_RETURN_IF_ERROR(r.U64("default_timeout_ms", &c->default_timeout_ms, 1, kU64Max));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_timeout_ms", &c->max_timeout_ms, 1, kU64Max));
  AIRLOCK_RETURN_IF_ERROR(r.U64("default_memory_mb", &c->default_memory_mb, 1, kU64Max));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_memory_mb", &c->max_memory_mb, 1, kU64Max));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_output_bytes", &c->max_output_bytes, 1, kU64Max));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_files", &c->max_files, 0, 100000));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_file_bytes", &c->max_file_bytes, 0, kU64Max));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_total_file_bytes", &c->max_total_file_bytes, 0, kU64Max));
  AIRLOCK_RETURN_IF_ERROR(r.U64("max_output_files_total_bytes", &c->max_output_files_total_bytes, 0, kU64Max));
  if (c->default_timeout_ms > c->max_timeout_ms) {
    return InvalidArgument("config.limits.default_timeout_ms: " +
                           std::to_string(c->default_timeout_ms) + " exceeds max_timeout_ms " +
                           std::to_string(c->max_timeout_ms));
  }
  if (c->default_memory_mb > c->max_memory_mb) {
    return InvalidArgument("config.limits.default_memory_mb: " +
                           std::to_string(c->default_memory_mb) + " exceeds max_memory_mb " +
                           std::to_string(c->max_memory_mb));
  }
  return OkStatus();
}

// languages.packages: {"NAME": {"language": "python", "path": "/srv/wheels"}}.
Status ReadPackageDirs(const ObjectReader& langs, std::map<std::string, PackageDirConfig>* out) {
  if (!langs.Has("packages") || langs.Get("packages").is_null()) return OkStatus();
  const json& all = langs.Get("packages");
  if (!all.is_object()) return InvalidArgument(langs.PathOf("packages") + ": expected an object");
  for (const auto& [name, value] : all.items()) {
    ObjectReader entry(value, langs.PathOf("packages") + "." + name);
    AIRLOCK_RETURN_IF_ERROR(entry.Check({"language", "path"}));
    PackageDirConfig d;
    AIRLOCK_RETURN_IF_ERROR(entry.Str("language", &d.language));
    AIRLOCK_RETURN_IF_ERROR(entry.Str("path", &d.path));
    if (Status st = runtimes::ValidatePackageDir({name, d.language, d.path}); !st.ok()) {
      return InvalidArgument(langs.PathOf("packages") + "." + name + ": " + st.message());
    }
    (*out)[name] = std::move(d);
  }
  return OkStatus();
}

json PackageDirsJson(const std::map<std::string, PackageDirConfig>& dirs) {
  json out = json::object();
  for (const auto& [name, d] : dirs) out[name] = {{"language", d.language}, {"path", d.path}};
  return out;
}

}  // namespace

int Config::ResolvedMaxConcurrentRuns() const {
  if (server.max_concurrent_runs > 0) return server.max_concurrent_runs;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

int Config::ResolvedMaxConcurrentRunsPerCaller() const {
  if (server.max_concurrent_runs_per_caller > 0) return server.max_concurrent_runs_per_caller;
  const int slots = ResolvedMaxConcurrentRuns();
  return slots > 1 ? slots - 1 : 1;
}

int Config::ResolvedMaxQueuedRunsPerCaller() const {
  if (server.max_queued_runs_per_caller > 0) return server.max_queued_runs_per_caller;
  return std::max(server.max_queued_runs / 2, 1);
}

uint64_t Config::ResolvedMaxSessions() const {
  if (sessions.max_total > 0) return sessions.max_total;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t mb = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) / 1024 * static_cast<uint64_t>(page) / 1024 : 0;
  const uint64_t per = 2 * std::max<uint64_t>(limits.default_memory_mb, 1);
  return std::clamp<uint64_t>(mb / per, 1, 64);
}

std::string Config::ResolvedStateDir() const {
  if (!server.state_dir.empty()) return server.state_dir;
  if (geteuid() == 0) return "/var/lib/airlock";
  const char* xdg = getenv("XDG_STATE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/airlock";
  const char* home = getenv("HOME");
  return std::string(home != nullptr && home[0] == '/' ? home : "/tmp") + "/.local/state/airlock";
}

std::string Config::AuditDbPath() const { return audit.path.empty() ? ResolvedStateDir() + "/audit.db" : audit.path; }

std::string Config::CodeToolsDbPath() const { return ResolvedStateDir() + "/codetools.db"; }

std::string Config::BuildCacheDir() const {
  return build_cache.dir.empty() ? ResolvedStateDir() + "/build-cache" : build_cache.dir;
}

std::string Config::PchDir() const { return BuildCacheDir() + "-pch"; }

Config DefaultConfig() { return Config{}; }

StatusOr<Config> ConfigFromJson(const json& j) {
  Config c = DefaultConfig();
  ObjectReader root(j, "config");
  AIRLOCK_RETURN_IF_ERROR(root.Check({"$schema", "server", "limits", "languages", "pool", "build_cache", "mcpServers",
                                      "endpoints", "roles", "access", "codeMode", "audit", "sessions", "runner",
                                      "state", "tasks"}));
  AIRLOCK_RETURN_IF_ERROR(ReadServer(root.Child("server"), &c.server));
  AIRLOCK_RETURN_IF_ERROR(ReadLimits(root.Child("limits"), &c.limits));
  ObjectReader langs = root.Child("languages");
  AIRLOCK_RETURN_IF_ERROR(langs.Check({"enabled", "default_isolation", "packages"}));
  AIRLOCK_RETURN_IF_ERROR(ReadPackageDirs(langs, &c.languages.packages));
  AIRLOCK_RETURN_IF_ERROR(langs.StrList("enabled", &c.languages.enabled));
  AIRLOCK_RETURN_IF_ERROR(CheckLanguageNames(c.languages.enabled, langs.PathOf("enabled")));
  AIRLOCK_RETURN_IF_ERROR(langs.Str("default_isolation", &c.languages.default_isolation));
  if (c.languages.default_isolation != "native" && c.languages.default_isolation != "wasm") {
    return InvalidArgument("config.languages.default_isolation: expected \"native\" or \"wasm\"");
  }
  ObjectReader pool = root.Child("pool");
  AIRLOCK_RETURN_IF_ERROR(
      pool.Check({"enabled", "max_per_language", "min_per_language", "max_total", "idle_seconds", "refill_defer_ms", "warm", "prestart", "memory_mb"}));
  AIRLOCK_RETURN_IF_ERROR(pool.Bool("prestart", &c.pool.prestart));
  AIRLOCK_RETURN_IF_ERROR(pool.Bool("enabled", &c.pool.enabled));
  AIRLOCK_RETURN_IF_ERROR(pool.U64("max_per_language", &c.pool.max_per_language, 1, 64));
  AIRLOCK_RETURN_IF_ERROR(pool.U64("min_per_language", &c.pool.min_per_language, 0, 64));
  AIRLOCK_RETURN_IF_ERROR(pool.U64("max_total", &c.pool.max_total, 1, 1024));
  AIRLOCK_RETURN_IF_ERROR(pool.U64("idle_seconds", &c.pool.idle_seconds, 1, 86400));
  AIRLOCK_RETURN_IF_ERROR(pool.U64("refill_defer_ms", &c.pool.refill_defer_ms, 0, 10000));
  AIRLOCK_RETURN_IF_ERROR(pool.StrList("warm", &c.pool.warm));
  if (pool.Has("memory_mb")) {
    const json& shapes = pool.Get("memory_mb");
    if (!shapes.is_array() || shapes.size() > 16) {
      return InvalidArgument(pool.PathOf("memory_mb") + ": expected an array of at most 16 integers");
    }
    c.pool.memory_mb.clear();
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (!shapes[i].is_number_unsigned() || shapes[i].get<uint64_t>() < 16 || shapes[i].get<uint64_t>() > 65536) {
        return InvalidArgument(pool.PathOf("memory_mb") + "[" + std::to_string(i) +
                               "]: expected an integer from 16 to 65536 (MiB)");
      }
      c.pool.memory_mb.push_back(shapes[i].get<uint64_t>());
    }
  }
  if (c.pool.min_per_language > c.pool.max_per_language) {
    return InvalidArgument("config.pool.min_per_language: exceeds max_per_language");
  }
  ObjectReader bc = root.Child("build_cache");
  AIRLOCK_RETURN_IF_ERROR(bc.Check({"enabled", "max_mb", "dir", "precompiled_headers", "wasm_code"}));
  AIRLOCK_RETURN_IF_ERROR(bc.Bool("enabled", &c.build_cache.enabled));
  AIRLOCK_RETURN_IF_ERROR(bc.Bool("precompiled_headers", &c.build_cache.precompiled_headers));
  AIRLOCK_RETURN_IF_ERROR(bc.Bool("wasm_code", &c.build_cache.wasm_code));
  AIRLOCK_RETURN_IF_ERROR(bc.U64("max_mb", &c.build_cache.max_mb, 1, 1u << 20));
  AIRLOCK_RETURN_IF_ERROR(bc.Str("dir", &c.build_cache.dir));
  if (!c.build_cache.dir.empty() && c.build_cache.dir.front() != '/') {
    return InvalidArgument("config.build_cache.dir: expected an absolute path");
  }
  ObjectReader rn = root.Child("runner");
  AIRLOCK_RETURN_IF_ERROR(rn.Check({"hosts", "dns", "dns_refresh_s", "tls", "health_interval_ms", "health_timeout_ms",
                                    "connect_timeout_ms", "max_concurrent_per_host"}));
  AIRLOCK_RETURN_IF_ERROR(rn.StrList("hosts", &c.runner.hosts));
  AIRLOCK_RETURN_IF_ERROR(rn.Str("dns", &c.runner.dns));
  AIRLOCK_RETURN_IF_ERROR(rn.U64("dns_refresh_s", &c.runner.dns_refresh_s, 1, 3600));
  AIRLOCK_RETURN_IF_ERROR(rn.U64("health_interval_ms", &c.runner.health_interval_ms, 50, 60000));
  AIRLOCK_RETURN_IF_ERROR(rn.U64("health_timeout_ms", &c.runner.health_timeout_ms, 50, 60000));
  AIRLOCK_RETURN_IF_ERROR(rn.U64("connect_timeout_ms", &c.runner.connect_timeout_ms, 50, 60000));
  AIRLOCK_RETURN_IF_ERROR(rn.U64("max_concurrent_per_host", &c.runner.max_concurrent_per_host, 0, 4096));
  for (size_t i = 0; i < c.runner.hosts.size(); ++i) {
    std::string host;
    int port = 0;
    if (!ParseListenAddress(c.runner.hosts[i], &host, &port).ok()) {
      return InvalidArgument("config.runner.hosts[" + std::to_string(i) + "]: expected HOST:PORT");
    }
  }
  if (!c.runner.dns.empty()) {
    std::string host;
    int port = 0;
    if (!ParseListenAddress(c.runner.dns, &host, &port).ok()) {
      return InvalidArgument("config.runner.dns: expected NAME:PORT");
    }
  }
  ObjectReader tls = rn.Child("tls");
  AIRLOCK_RETURN_IF_ERROR(tls.Check({"ca_file", "cert_file", "key_file", "server_name"}));
  AIRLOCK_RETURN_IF_ERROR(tls.Str("ca_file", &c.runner.tls.ca_file));
  AIRLOCK_RETURN_IF_ERROR(tls.Str("cert_file", &c.runner.tls.cert_file));
  AIRLOCK_RETURN_IF_ERROR(tls.Str("key_file", &c.runner.tls.key_file));
  AIRLOCK_RETURN_IF_ERROR(tls.Str("server_name", &c.runner.tls.server_name));
  if (c.runner.remote() &&
      (c.runner.tls.ca_file.empty() || c.runner.tls.cert_file.empty() || c.runner.tls.key_file.empty())) {
    return InvalidArgument("config.runner.tls: runner hosts need ca_file, cert_file and key_file (mutual TLS)");
  }
  ObjectReader st = root.Child("state");
  AIRLOCK_RETURN_IF_ERROR(st.Check({"backend", "postgres_dsn", "postgres_dsn_file"}));
  AIRLOCK_RETURN_IF_ERROR(st.Str("backend", &c.state.backend));
  AIRLOCK_RETURN_IF_ERROR(st.Str("postgres_dsn", &c.state.postgres_dsn));
  AIRLOCK_RETURN_IF_ERROR(st.Str("postgres_dsn_file", &c.state.postgres_dsn_file));
  if (c.state.backend != "sqlite" && c.state.backend != "postgres") {
    return InvalidArgument("config.state.backend: expected \"sqlite\" or \"postgres\"");
  }
  if (!c.state.postgres_dsn.empty() && !c.state.postgres_dsn_file.empty()) {
    return InvalidArgument("config.state: postgres_dsn and postgres_dsn_file are both set; use one");
  }
  if (c.state.backend == "postgres" && !c.server.http.keys_file.empty()) {
    return InvalidArgument(
        "config.server.http.keys_file: must be empty with state.backend \"postgres\" (the API keys live in the "
        "database; set server.http.api_keys to require them)");
  }
  ObjectReader ss = root.Child("sessions");
  AIRLOCK_RETURN_IF_ERROR(ss.Check({"enabled", "idle_timeout_s", "max_idle_timeout_s", "max_lifetime_s",
                                    "max_per_caller", "max_total", "max_cpu_s", "pause_after_s", "image_dir"}));
  AIRLOCK_RETURN_IF_ERROR(ss.Bool("enabled", &c.sessions.enabled));
  AIRLOCK_RETURN_IF_ERROR(ss.U64("idle_timeout_s", &c.sessions.idle_timeout_s, 1, 7 * 86400));
  AIRLOCK_RETURN_IF_ERROR(ss.U64("max_idle_timeout_s", &c.sessions.max_idle_timeout_s, 1, 7 * 86400));
  AIRLOCK_RETURN_IF_ERROR(ss.U64("max_lifetime_s", &c.sessions.max_lifetime_s, 1, 7 * 86400));
  AIRLOCK_RETURN_IF_ERROR(ss.U64("max_per_caller", &c.sessions.max_per_caller, 1, 1024));
  AIRLOCK_RETURN_IF_ERROR(ss.U64("max_total", &c.sessions.max_total, 0, 4096));
  AIRLOCK_RETURN_IF_ERROR(ss.U64("max_cpu_s", &c.sessions.max_cpu_s, 1, 7 * 86400));
  AIRLOCK_RETURN_IF_ERROR(ss.U64("pause_after_s", &c.sessions.pause_after_s, 0, 7 * 86400));
  AIRLOCK_RETURN_IF_ERROR(ss.Str("image_dir", &c.sessions.image_dir));
  if (!c.sessions.image_dir.empty() && c.sessions.image_dir.front() != '/') {
    return InvalidArgument("config.sessions.image_dir: must be an absolute path");
  }
  if (c.sessions.idle_timeout_s > c.sessions.max_idle_timeout_s) {
    return InvalidArgument("config.sessions.idle_timeout_s: exceeds max_idle_timeout_s");
  }
  ObjectReader tk = root.Child("tasks");
  AIRLOCK_RETURN_IF_ERROR(
      tk.Check({"mode", "min_timeout_ms", "max_timeout_ms", "ttl_s", "max_per_caller", "poll_interval_ms", "lease_s"}));
  AIRLOCK_RETURN_IF_ERROR(tk.Str("mode", &c.tasks.mode));
  if (c.tasks.mode != "never" && c.tasks.mode != "long" && c.tasks.mode != "always") {
    return InvalidArgument("config.tasks.mode: expected \"never\", \"long\" or \"always\"");
  }
  AIRLOCK_RETURN_IF_ERROR(tk.U64("min_timeout_ms", &c.tasks.min_timeout_ms, 0, 7 * 86400 * 1000ull));
  AIRLOCK_RETURN_IF_ERROR(tk.U64("max_timeout_ms", &c.tasks.max_timeout_ms, 1, 86400 * 1000ull));
  AIRLOCK_RETURN_IF_ERROR(tk.U64("ttl_s", &c.tasks.ttl_s, 1, 7 * 86400));
  AIRLOCK_RETURN_IF_ERROR(tk.U64("max_per_caller", &c.tasks.max_per_caller, 1, 1024));
  AIRLOCK_RETURN_IF_ERROR(tk.U64("poll_interval_ms", &c.tasks.poll_interval_ms, 10, 600000));
  AIRLOCK_RETURN_IF_ERROR(tk.U64("lease_s", &c.tasks.lease_s, 3, 3600));
  if (c.tasks.ttl_s * 1000 <= c.tasks.max_timeout_ms) {
    return InvalidArgument("config.tasks.ttl_s: must exceed max_timeout_ms (a task must outlive its run)");
  }
  ObjectReader audit = root.Child("audit");
  AIRLOCK_RETURN_IF_ERROR(audit.Check({"enabled", "path", "fail_closed", "sync"}));
  AIRLOCK_RETURN_IF_ERROR(audit.Str("sync", &c.audit.sync));
  if (c.audit.sync != "full" && c.audit.sync != "normal") {
    return InvalidArgument("config.audit.sync: expected \"full\" or \"normal\"");
  }
  AIRLOCK_RETURN_IF_ERROR(audit.Bool("enabled", &c.audit.enabled));
  AIRLOCK_RETURN_IF_ERROR(audit.Str("path", &c.audit.path));
  AIRLOCK_RETURN_IF_ERROR(audit.Bool("fail_closed", &c.audit.fail_closed));
  for (const char* key : {"mcpServers", "endpoints", "roles", "access", "codeMode"}) {
    if (root.Has(key) && !root.Get(key).is_object() && !root.Get(key).is_null()) {
      return InvalidArgument(root.PathOf(key) + ": expected an object");
    }
  }
  if (root.Has("mcpServers")) c.mcp_servers = root.Get("mcpServers");
  if (root.Has("endpoints")) c.endpoints = root.Get("endpoints");
  if (root.Has("roles")) c.roles = root.Get("roles");
  if (root.Has("access")) c.access = root.Get("access");
  if (root.Has("codeMode")) c.code_mode = root.Get("codeMode");
  AIRLOCK_RETURN_IF_ERROR(CheckEndpointPackages(c));
  return c;
}

StatusOr<Config> ParseConfig(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded()) return InvalidArgument("config: not valid JSON");
  return ConfigFromJson(j);
}

StatusOr<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open config file");
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    return InvalidArgument(path + ": invalid JSON: " + e.what());
  }
  StatusOr<Config> c = ConfigFromJson(j);
  if (!c.ok()) return c.status().WithContext(path);
  return c;
}

json ConfigToJson(const Config& c) {
  const HttpConfig& h = c.server.http;
  const LimitsConfig& l = c.limits;
  json out = {
      {"server",
       {{"http",
         {{"listen", h.listen},
          {"allowed_origins", h.allowed_origins},
          {"allowed_hosts", h.allowed_hosts},
          {"token_file", h.token_file.empty() ? json(nullptr) : json(h.token_file)},
          {"keys_file", h.keys_file.empty() ? json(nullptr) : json(h.keys_file)},
          {"api_keys", h.api_keys},
          {"metrics_token_file", h.metrics_token_file.empty() ? json(nullptr) : json(h.metrics_token_file)},
          {"session_idle_timeout_s", h.session_idle_timeout_s},
          {"threads", h.threads},
          {"max_sessions", h.max_sessions},
          {"body_timeout_s", h.body_timeout_s},
          {"body_min_rate", h.body_min_rate},
          {"console",
           {{"enabled", h.console_enabled},
            {"path", h.console_path},
            {"idle_timeout_s", h.console_idle_timeout_s},
            {"max_lifetime_s", h.console_max_lifetime_s},
            {"https", h.console_https},
            {"signin_max_failures", h.console_signin_max_failures},
            {"signin_window_s", h.console_signin_window_s},
            {"sso",
             {{"issuer", h.console_sso.issuer.empty() ? json(nullptr) : json(h.console_sso.issuer)},
              {"client_id", h.console_sso.client_id.empty() ? json(nullptr) : json(h.console_sso.client_id)},
              {"client_secret_file",
               h.console_sso.client_secret_file.empty() ? json(nullptr) : json(h.console_sso.client_secret_file)},
              {"redirect_uri", h.console_sso.redirect_uri.empty() ? json(nullptr) : json(h.console_sso.redirect_uri)},
              {"scopes", h.console_sso.scopes},
              {"provider_name", h.console_sso.provider_name.empty() ? json(nullptr) : json(h.console_sso.provider_name)},
              {"admin_claim", h.console_sso.admin_claim},
              {"admin_values", h.console_sso.admin_values},
              {"role", h.console_sso.role},
              {"allow_key_signin", h.console_sso.allow_key_signin}}}}},
          {"tls",
           {{"cert_file", h.tls.cert_file.empty() ? json(nullptr) : json(h.tls.cert_file)},
            {"key_file", h.tls.key_file.empty() ? json(nullptr) : json(h.tls.key_file)},
            {"min_version", h.tls.min_version}}},
          {"oauth",
           {{"issuer", h.oauth.issuer.empty() ? json(nullptr) : json(h.oauth.issuer)},
            {"resource", h.oauth.resource.empty() ? json(nullptr) : json(h.oauth.resource)},
            {"authorization_servers", h.oauth.authorization_servers},
            {"jwks_uri", h.oauth.jwks_uri.empty() ? json(nullptr) : json(h.oauth.jwks_uri)},
            {"scopes_supported", h.oauth.scopes_supported},
            {"required_scope", h.oauth.required_scope.empty() ? json(nullptr) : json(h.oauth.required_scope)},
            {"role_rules",
             [&] {
               json rules = json::array();
               for (const OAuthRoleRule& x : h.oauth.role_rules) {
                 json o = {{"role", x.role}};
                 if (!x.scope.empty()) o["scope"] = x.scope;
                 if (!x.claim.empty()) o["claim"] = x.claim;
                 if (!x.value.empty()) o["value"] = x.value;
                 rules.push_back(o);
               }
               return rules;
             }()},
            {"jwks_refresh_min_s", h.oauth.jwks_refresh_min_s},
            {"clock_skew_s", h.oauth.clock_skew_s},
            {"max_token_bytes", h.oauth.max_token_bytes},
            {"behind_tls_proxy", h.oauth.behind_tls_proxy},
            {"introspection",
             [&] {
               const OAuthIntrospectionConfig& i = h.oauth.introspection;
               auto str = [](const std::string& v) { return v.empty() ? json(nullptr) : json(v); };
               return json{{"endpoint", str(i.endpoint)},
                           {"client_id", str(i.client_id)},
                           {"client_secret_file", str(i.client_secret_file)},
                           {"client_secret_env", str(i.client_secret_env)},
                           {"all_tokens", i.all_tokens},
                           {"cache_s", i.cache_s},
                           {"cache_max_entries", i.cache_max_entries},
                           {"max_per_minute", i.max_per_minute}};
             }()}}}}},
        {"max_message_bytes", c.server.max_message_bytes},
        {"max_concurrent_runs", c.server.max_concurrent_runs},
        {"max_queued_runs", c.server.max_queued_runs},
        {"max_concurrent_runs_per_caller", c.server.max_concurrent_runs_per_caller},
        {"max_queued_runs_per_caller", c.server.max_queued_runs_per_caller},
        {"shutdown_grace_s", c.server.shutdown_grace_s},
        {"readyz_requires_connectors", c.server.readyz_requires_connectors},
        {"state_dir", c.server.state_dir.empty() ? json(nullptr) : json(c.server.state_dir)}}},
      {"audit",
       {{"enabled", c.audit.enabled},
        {"path", c.audit.path.empty() ? json(nullptr) : json(c.audit.path)},
        {"fail_closed", c.audit.fail_closed},
        {"sync", c.audit.sync}}},
      {"limits",
       {{"default_timeout_ms", l.default_timeout_ms},
        {"max_timeout_ms", l.max_timeout_ms},
        {"default_memory_mb", l.default_memory_mb},
        {"max_memory_mb", l.max_memory_mb},
        {"max_output_bytes", l.max_output_bytes},
        {"max_files", l.max_files},
        {"max_file_bytes", l.max_file_bytes},
        {"max_total_file_bytes", l.max_total_file_bytes},
        {"max_output_files_total_bytes", l.max_output_files_total_bytes}}},
      {"languages",
       {{"enabled", c.languages.enabled},
        {"default_isolation", c.languages.default_isolation},
        {"packages", PackageDirsJson(c.languages.packages)}}},
      {"pool",
       {{"enabled", c.pool.enabled},
        {"max_per_language", c.pool.max_per_language},
        {"min_per_language", c.pool.min_per_language},
        {"max_total", c.pool.max_total},
        {"idle_seconds", c.pool.idle_seconds},
        {"refill_defer_ms", c.pool.refill_defer_ms},
        {"warm", c.pool.warm},
        {"memory_mb", c.pool.memory_mb},
        {"prestart", c.pool.prestart}}},
      {"build_cache",
       {{"enabled", c.build_cache.enabled}, {"max_mb", c.build_cache.max_mb}, {"dir", c.build_cache.dir},
        {"precompiled_headers", c.build_cache.precompiled_headers}, {"wasm_code", c.build_cache.wasm_code}}},
      {"runner",
       {{"hosts", c.runner.hosts},
        {"dns", c.runner.dns},
        {"dns_refresh_s", c.runner.dns_refresh_s},
        {"tls",
         {{"ca_file", c.runner.tls.ca_file},
          {"cert_file", c.runner.tls.cert_file},
          {"key_file", c.runner.tls.key_file},
          {"server_name", c.runner.tls.server_name}}},
        {"health_interval_ms", c.runner.health_interval_ms},
        {"health_timeout_ms", c.runner.health_timeout_ms},
        {"connect_timeout_ms", c.runner.connect_timeout_ms},
        {"max_concurrent_per_host", c.runner.max_concurrent_per_host}}},
      {"state",
       {{"backend", c.state.backend},
        {"postgres_dsn", c.state.postgres_dsn},
        {"postgres_dsn_file", c.state.postgres_dsn_file}}},
      {"sessions",
       {{"enabled", c.sessions.enabled},
        {"idle_timeout_s", c.sessions.idle_timeout_s},
        {"max_idle_timeout_s", c.sessions.max_idle_timeout_s},
        {"max_lifetime_s", c.sessions.max_lifetime_s},
        {"max_per_caller", c.sessions.max_per_caller},
        {"max_total", c.sessions.max_total},
        {"max_cpu_s", c.sessions.max_cpu_s},
        {"pause_after_s", c.sessions.pause_after_s},
        {"image_dir", c.sessions.image_dir}}},
      {"tasks",
       {{"mode", c.tasks.mode},
        {"min_timeout_ms", c.tasks.min_timeout_ms},
        {"max_timeout_ms", c.tasks.max_timeout_ms},
        {"ttl_s", c.tasks.ttl_s},
        {"max_per_caller", c.tasks.max_per_caller},
        {"poll_interval_ms", c.tasks.poll_interval_ms},
        {"lease_s", c.tasks.lease_s}}},
  };
  if (!c.mcp_servers.is_null()) out["mcpServers"] = c.mcp_servers;
  if (!c.endpoints.is_null()) out["endpoints"] = c.endpoints;
  if (!c.roles.is_null()) out["roles"] = c.roles;
  if (!c.access.is_null()) out["access"] = c.access;
  if (!c.code_mode.is_null()) out["codeMode"] = c.code_mode;
  return out;
}

json ConfigSchemaDoc() {
  struct Entry {
    const char* path;
    const char* type;
    const char* doc;
  };
  static const Entry kEntries[] = {
      {"server.http.listen", "string", "HOST:PORT the Streamable HTTP transport binds (serve --http)."},
      {"server.http.allowed_origins", "string[]",
       "Origin header values accepted besides http(s)://localhost, 127.0.0.1 and [::1] (any port)."},
      {"server.http.allowed_hosts", "string[]",
       "Host header names accepted besides localhost, 127.0.0.1 and [::1]; when empty and bound to a "
       "non-loopback address, Host is not checked."},
      {"server.http.token_file", "string|null",
       "File holding a static bearer token; when set, every HTTP request needs Authorization: Bearer."},
      {"server.http.keys_file", "string|null",
       "API key store managed with `airlock keys` (keys stored hashed); when set, every HTTP request needs "
       "Authorization: Bearer <an active key>; a revoked key is refused on its next request. Must be empty with "
       "state.backend \"postgres\"."},
      {"server.http.api_keys", "boolean",
       "Require an API key on every HTTP request (and enable the console), with the keys in state.backend's store: "
       "the database for \"postgres\", keys_file (default <state dir>/keys.json) for \"sqlite\" (default false; "
       "a non-empty keys_file alone also turns keys on)."},
      {"server.http.metrics_token_file", "string|null",
       "File holding a token that lets non-loopback clients read /metrics (Authorization: Bearer); "
       "without it /metrics answers loopback clients only."},
      {"server.http.session_idle_timeout_s", "integer", "Sessions idle this long are ended."},
      {"server.http.threads", "integer", "HTTP worker threads; each open connection or SSE stream holds one."},
      {"server.http.max_sessions", "integer", "Most concurrent HTTP sessions; initialize beyond it gets 503."},
      {"server.http.body_timeout_s", "integer",
       "A request body must arrive within this long of its header (else 408); no worker waits for it."},
      {"server.http.body_min_rate", "integer",
       "Slowest accepted request body, bytes/s over each 5 s (else 408); 0 = no minimum."},
      {"server.http.console.enabled", "boolean",
       "Serve the operators' console (docs/console.md); it is on only when API keys are (keys_file or api_keys)."},
      {"server.http.console.path", "string", "Where the console is served (\"/\" + [a-z0-9_-]{1,32})."},
      {"server.http.console.idle_timeout_s", "integer", "A console sign-in ends this long after its last use."},
      {"server.http.console.max_lifetime_s", "integer", "... and this long after it began, used or not."},
      {"server.http.console.signin_max_failures", "integer",
       "Failed console sign-ins per client address per window; then 429 until the window ends."},
      {"server.http.console.signin_window_s", "integer", "The window of signin_max_failures, seconds."},
      {"server.http.console.https", "boolean",
       "The console is reached over HTTPS (a TLS-terminating proxy): cookies get Secure, Origin must be https://."},
      {"server.http.console.sso.issuer", "string|null",
       "Console single sign-on with OpenID Connect (docs/console.md): the provider's issuer; unset = off."},
      {"server.http.console.sso.client_id", "string|null", "The console's confidential client at the provider."},
      {"server.http.console.sso.client_secret_file", "string|null",
       "File holding the client secret (client_secret_basic), read at start."},
      {"server.http.console.sso.redirect_uri", "string|null",
       "The callback URL registered at the provider; unset = http[s]://<listen><console path>/sso/callback."},
      {"server.http.console.sso.scopes", "string", "Scopes asked for (must include openid)."},
      {"server.http.console.sso.provider_name", "string|null",
       "The sign-in button's \"Sign in with <name>\"; unset = the issuer's host."},
      {"server.http.console.sso.admin_claim", "string", "The ID token claim that makes a user an administrator."},
      {"server.http.console.sso.admin_values", "string[]",
       "Values of admin_claim (equal, a space-separated word, or an array element) that make an administrator."},
      {"server.http.console.sso.role", "string", "The admin role of an administrator's console session."},
      {"server.http.console.sso.allow_key_signin", "boolean", "Also offer the API key sign-in form."},
      {"server.http.tls.cert_file", "string|null",
       "PEM certificate chain: serve --http speaks HTTPS itself (with key_file; re-read on SIGHUP)."},
      {"server.http.tls.key_file", "string|null", "PEM private key of tls.cert_file (unencrypted)."},
      {"server.http.tls.min_version", "string",
       "Oldest TLS version accepted: \"1.2\" (ECDHE with AES-GCM/ChaCha20-Poly1305) or \"1.3\"."},
      {"server.http.oauth.issuer", "string|null",
       "OAuth 2.1 resource server (docs/security.md): the authorization server's issuer; tokens' iss must equal "
       "it. Empty: OAuth off."},
      {"server.http.oauth.resource", "string|null",
       "This server's canonical URI (https://, or http:// on loopback); tokens' aud must contain it (RFC 8707)."},
      {"server.http.oauth.authorization_servers", "string[]",
       "Protected Resource Metadata's authorization_servers; empty: [issuer]."},
      {"server.http.oauth.jwks_uri", "string|null",
       "The issuer's JWKS URL; empty: found by RFC 8414 / OpenID discovery of the issuer."},
      {"server.http.oauth.scopes_supported", "string[]", "Scopes listed in the metadata and the 401 challenge."},
      {"server.http.oauth.required_scope", "string|null", "A scope every token must have (else 403 insufficient_scope)."},
      {"server.http.oauth.role_rules", "object[]",
       "{scope?, claim?, value?, role}: the first rule the token matches gives its role; none: 403."},
      {"server.http.oauth.jwks_refresh_min_s", "integer",
       "At most one JWKS fetch per this long (an unknown kid triggers one)."},
      {"server.http.oauth.clock_skew_s", "integer", "Leeway for exp, nbf and iat, seconds."},
      {"server.http.oauth.max_token_bytes", "integer", "Longer bearer tokens are refused unread."},
      {"server.http.oauth.behind_tls_proxy", "boolean",
       "A TLS-terminating proxy serves airlock: allows OAuth on a non-loopback plain HTTP listener."},
      {"server.http.oauth.introspection.endpoint", "string|null",
       "RFC 7662 token introspection endpoint; empty: the issuer metadata's introspection_endpoint."},
      {"server.http.oauth.introspection.client_id", "string|null",
       "airlock's client at the authorization server (client_secret_basic); set: opaque tokens are introspected."},
      {"server.http.oauth.introspection.client_secret_file", "string|null", "File holding the client secret."},
      {"server.http.oauth.introspection.client_secret_env", "string|null",
       "Environment variable holding the client secret (instead of the file)."},
      {"server.http.oauth.introspection.all_tokens", "boolean", "Introspect JWTs too instead of validating them locally."},
      {"server.http.oauth.introspection.cache_s", "integer",
       "An introspection answer is reused this many seconds, never past the token's exp; 0: never."},
      {"server.http.oauth.introspection.cache_max_entries", "integer", "Most cached answers (keyed by token hash)."},
      {"server.http.oauth.introspection.max_per_minute", "integer",
       "Most introspection requests a minute; past it tokens not in the cache get 503."},
      {"server.max_message_bytes", "integer", "Largest JSON-RPC message (stdio line or POST body)."},
      {"server.max_concurrent_runs", "integer", "Runs executing at once; 0 = number of cores."},
      {"server.max_queued_runs", "integer", "Runs waiting for a slot; beyond it calls fail fast as busy."},
      {"server.max_concurrent_runs_per_caller", "integer",
       "Run slots one caller may hold; 0 = slots - 1 (at least 1). Past it the caller queues."},
      {"server.max_queued_runs_per_caller", "integer",
       "Queue places one caller may hold; 0 = half of max_queued_runs (at least 1). Past it: busy."},
      {"server.shutdown_grace_s", "integer",
       "On SIGTERM or SIGINT, calls in flight get this long to finish before they are cancelled."},
      {"server.readyz_requires_connectors", "boolean",
       "GET /readyz is 503 while any enabled connector (mcpServers) is down."},
      {"limits.default_timeout_ms", "integer", "Wall-clock limit when a call gives no timeout_ms."},
      {"limits.max_timeout_ms", "integer", "Largest timeout_ms a call may ask for."},
      {"limits.default_memory_mb", "integer", "Memory limit when a call gives no memory_mb."},
      {"limits.max_memory_mb", "integer", "Largest memory_mb a call may ask for."},
      {"limits.max_output_bytes", "integer", "Cap on each of stdout/stderr returned."},
      {"limits.max_files", "integer", "Most input files per call (also output files returned)."},
      {"limits.max_file_bytes", "integer", "Largest single input or output file."},
      {"limits.max_total_file_bytes", "integer", "Largest sum of input file sizes per call."},
      {"limits.max_output_files_total_bytes", "integer",
       "Largest sum of output files returned per run (default 8 MiB); the rest is listed in files_skipped."},
      {"languages.enabled", "string[]", "Languages offered to clients (known names only); empty = all installed."},
      {"languages.default_isolation", "string",
       "Tier for runs that name none: \"native\" (default) or \"wasm\"; a language without it uses its other tier."},
      {"languages.packages", "object",
       "Operator package directories: \"name\": {language: python|javascript|ruby, path}, bound read-only into the native "
       "jails of the endpoints that list them (an endpoint's \"packages\", default all)."},
      {"pool.enabled", "boolean", "Keep jails created ahead of time in `airlock serve`'s runner (default true)."},
      {"pool.max_per_language", "integer", "Most ready jails per language, tier and limits (default 4)."},
      {"pool.min_per_language", "integer", "Ready jails kept when idle, once a language was used (default 1; 0 drains)."},
      {"pool.max_total", "integer", "Most ready jails in all (default 16)."},
      {"pool.idle_seconds", "integer", "Each idle period without a run lowers a language's target by one (default 300)."},
      {"pool.refill_defer_ms", "integer",
       "A refill waits up to this long for the runs in flight to end, so it does not slow them (default 50; 0: never waits)."},
      {"pool.warm", "string[]",
       "Languages warmed at start-up (default [\"python\"]): \"python\" its native tier, \"python:wasm\" its WASM tier, \"code:javascript\" code mode's engine."},
      {"pool.memory_mb", "integer[]",
       "Memory limits (MiB) besides each language's default whose jails are pooled (default []): any other memory_mb runs "
       "cold, so callers cannot multiply pool shapes."},
      {"pool.prestart", "boolean",
       "Ready jails of python, javascript, ruby, php (and WASM-tier python) hold their interpreter already started, waiting for the "
       "program (default true; see docs/performance.md)."},
      {"runner.hosts", "string[]",
       "Runner hosts (`airlock runner-host`) as HOST:PORT; empty with runner.dns empty: the local runner process."},
      {"runner.dns", "string", "NAME:PORT; every address NAME resolves to is a runner host (a headless Service)."},
      {"runner.dns_refresh_s", "integer", "How often runner.dns is resolved again (10)."},
      {"runner.tls.ca_file", "string", "PEM CA that signed the runner hosts' and the gateways' certificates."},
      {"runner.tls.cert_file", "string", "PEM certificate this process presents (client for a gateway, server for a runner host)."},
      {"runner.tls.key_file", "string", "PEM private key of cert_file."},
      {"runner.tls.server_name", "string", "Name the runner hosts' certificates must carry; empty: each address's host."},
      {"runner.health_interval_ms", "integer", "Every runner host is pinged this often (1000)."},
      {"runner.health_timeout_ms", "integer", "A host that does not answer within this is taken out; its runs fail runner_unavailable (2000)."},
      {"runner.connect_timeout_ms", "integer", "Connecting to a runner host, TLS included (3000)."},
      {"runner.max_concurrent_per_host", "integer", "Runs in flight on one host; 0: the gateway's server.max_concurrent_runs."},
      {"state.backend", "string", "\"sqlite\" (files in the state dir) or \"postgres\" (shared by several gateways)."},
      {"state.postgres_dsn", "string", "libpq connection string; PG* environment variables fill the rest."},
      {"state.postgres_dsn_file", "string", "A file holding the connection string (a mounted Secret)."},
      {"sessions.enabled", "boolean",
       "Offer open_session/close_session/list_sessions/pause_session/resume_session/fork_session (default true; "
       "docs/sessions.md)."},
      {"sessions.idle_timeout_s", "integer", "A session idle this long is closed (default 600)."},
      {"sessions.max_idle_timeout_s", "integer", "The most open_session's timeout_s may ask (default 3600)."},
      {"sessions.max_lifetime_s", "integer", "A session is closed this long after it opened (default 3600)."},
      {"sessions.max_per_caller", "integer", "Open sessions per caller (default 4)."},
      {"sessions.max_total", "integer", "Open sessions in all (default 0: memory / (2 x default memory), 1..64)."},
      {"sessions.max_cpu_s", "integer", "CPU seconds a session's interpreter may use over its life (default 600)."},
      {"sessions.pause_after_s", "integer",
       "A session that can be paused (WASM-tier Python) idle this long is paused by its runner until its next call "
       "(default 300; 0: never)."},
      {"sessions.image_dir", "string",
       "Paused sessions' images: empty (default) for a private temporary directory that goes with the runner; an "
       "absolute path for a 0700 directory of the runner's own where sessions outlive a runner restart."},
      {"tasks.mode", "string",
       "MCP tasks for run_code/execute (modern clients declaring io.modelcontextprotocol/tasks): never, long, always."},
      {"tasks.min_timeout_ms", "integer", "With mode long: a call asking at least this timeout becomes a task (30000)."},
      {"tasks.max_timeout_ms", "integer", "The most a task's run may ask (timeout_ms), above limits.max_timeout_ms (600000)."},
      {"tasks.ttl_s", "integer", "A task (and its result) is gone this long after it was created (3600)."},
      {"tasks.max_per_caller", "integer", "Working tasks per caller; past it the call is a tool error (8)."},
      {"tasks.poll_interval_ms", "integer", "The pollIntervalMs tasks tell clients (1000)."},
      {"tasks.lease_s", "integer",
       "A working task's lease, renewed by its gateway; a dead gateway's tasks read failed after it (30)."},
      {"build_cache.enabled", "boolean", "Keep compiled programs by content in `airlock serve`'s runner (default true)."},
      {"build_cache.max_mb", "integer", "Disk bound of the build cache; least recently used entries go first (256)."},
      {"build_cache.dir", "string", "Where it lives (absolute; default <state dir>/build-cache, mode 0700)."},
      {"build_cache.precompiled_headers", "boolean",
       "Precompile <iostream>, <bits/stdc++.h>, <vector> and <string> once per toolchain, in <build_cache.dir>-pch, "
       "for C++ programs that start by including one (default true)."},
      {"build_cache.wasm_code", "boolean",
       "Compile the WASM tier's CPython and PHP once, into /var/cache/airlock/wasm-code, and load that code in "
       "each of their processes instead of compiling the module again; and encode the JavaScript engine's "
       "self-hosted code there once, which every airlock-js start (WASM tier, code mode) then decodes instead of "
       "parsing, and index CPython's standard-library tar there (default true)."},
      {"mcpServers", "object",
       "Downstream MCP servers (code mode's connectors): \"name\": {\"command\",\"args\",\"env\"} for stdio or "
       "{\"url\",\"headers\"} for Streamable HTTP, plus airlock's own keys (see docs/codemode.md)."},
      {"codeMode", "object",
       "Code mode: {\"enabled\": true, \"limits\": {wall_ms, max_calls, max_concurrent, max_args_bytes, "
       "max_result_bytes, max_console_bytes, memory_mb}, \"proposals_per_hour\": 20} (see docs/codemode.md)."},
      {"server.state_dir", "string|null",
       "Directory for audit.db and codetools.db; default /var/lib/airlock (root) or ~/.local/state/airlock."},
      {"audit.enabled", "boolean", "Write the audit log (runs, bridged calls, direct tool calls, admin actions)."},
      {"audit.path", "string|null", "The audit database; default <state_dir>/audit.db."},
      {"audit.fail_closed", "boolean", "Refuse runs and tool calls when the audit log cannot be written."},
      {"audit.sync", "string",
       "\"normal\" (default): each record is written before the action goes on and survives any airlock crash; "
       "a power loss may lose the newest records. \"full\": each record is also fsynced (~0.7 ms, twice per run)."},
      {"endpoints", "object",
       "Named endpoints: \"name\": {path, connectors, code_mode: off|tools|inline, gateway, run_code, isolation: [native|wasm], packages} "
       "(see docs/governance.md)."},
      {"roles", "object",
       "Roles: \"name\": {connectors, tools, code_tools, inline, propose, write, admin} (see docs/governance.md)."},
      {"access", "object",
       "Who callers are without an API key: {stdio: {user, role}, token_role, anonymous_role} "
       "(see docs/governance.md)."},
  };
  json defaults = ConfigToJson(DefaultConfig());
  json out = json::object();
  for (const Entry& e : kEntries) {
    std::string p = "/" + std::string(e.path);
    for (char& ch : p) {
      if (ch == '.') ch = '/';
    }
    json::json_pointer dotted(p);
    out[e.path] = {{"type", e.type},
                   {"default", defaults.contains(dotted) ? defaults[dotted] : json(nullptr)},
                   {"doc", e.doc}};
  }
  return out;
}

Status ParseListenAddress(const std::string& listen, std::string* host, int* port) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("\"" + listen + "\" is not HOST:PORT");
  }
  std::string h = listen.substr(0, colon);
  std::string p = listen.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("\"" + listen + "\": bad port");
  }
  int n = std::stoi(p);
  if (n > 65535) return InvalidArgument("\"" + listen + "\": port out of range");
  *host = h;
  *port = n;
  return OkStatus();
}

}  // namespace airlock::config
