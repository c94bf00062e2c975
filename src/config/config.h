// airlock's configuration: one JSON file with embedded defaults.
//
// Every key is optional; a missing file section keeps its default, so
// `DefaultConfig()` is a complete working configuration and no file is
// needed. Unknown keys and ill-typed values are errors that name the full
// path ("config.server.http.bind: unknown key"). The schema is documented
// in docs/configuration.md and returned by ConfigSchemaDoc().
//
//   StatusOr<config::Config> cfg = config::LoadConfig("/etc/airlock.json");
//   if (!cfg.ok()) { std::cerr << cfg.status().message(); return 2; }
//
// CLI flags override file values by assigning the fields after loading.
#ifndef AIRLOCK_CONFIG_CONFIG_H_
#define AIRLOCK_CONFIG_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::config {

// One rule of server.http.oauth.role_rules: a token that has `scope` (when
// set) and whose claim `claim` equals or contains `value` (when set) gets
// `role`. At least one of scope/claim; the first matching rule wins.
struct OAuthRoleRule {
  std::string scope;
  std::string claim;
  std::string value;
  std::string role;
};

// server.http.oauth.introspection: opaque access tokens checked at the
// authorization server's RFC 7662 endpoint. Off while `client_id` is empty.
struct OAuthIntrospectionConfig {
  std::string endpoint;   // empty: the issuer metadata's introspection_endpoint
  std::string client_id;  // airlock's own client at the authorization server
  // The client secret (client_secret_basic): read from this file, or from
  // this environment variable; exactly one with client_id. Never in the
  // config itself, which `airlock config` prints.
  std::string client_secret_file;
  std::string client_secret_env;
  bool all_tokens = false;             // introspect JWTs too (else they are validated locally)
  uint64_t cache_s = 5;                // an answer is reused this long (never past the token's exp); 0: never
  uint64_t cache_max_entries = 4096;   // cached answers (hashes of tokens), oldest evicted first
  uint64_t max_per_minute = 600;       // introspection requests a minute; past it: 503
};

// server.http.console.sso: console single sign-on with OpenID Connect
// (issue 31, docs/console.md). Off while `issuer` is empty.
struct ConsoleSsoConfig {
  std::string issuer;     // the OpenID provider's issuer (exact `iss`; discovery from it)
  std::string client_id;  // the console's confidential client at the provider
  // The client secret (client_secret_basic), read from this file at start;
  // never in the config itself.
  std::string client_secret_file;
  // Where the provider sends the browser back; empty: derived from the
  // listener ("http[s]://<listen><console path>/sso/callback").
  std::string redirect_uri;
  std::string scopes = "openid profile email";
  std::string provider_name;  // the button's "Sign in with <name>"; empty: the issuer's host
  // A user is an administrator when the ID token's `admin_claim` equals or
  // contains one of `admin_values` (string, space-separated words or array).
  std::string admin_claim = "groups";
  std::vector<std::string> admin_values;
  std::string role = "admin";  // the (admin) role an administrator's console session has
  bool allow_key_signin = true;  // the API key form too
};

// server.http.oauth: airlock as an OAuth 2.1 resource server (docs/security.md).
// Off while `issuer` is empty.
struct OAuthConfig {
  std::string issuer;    // the authorization server's issuer identifier (exact `iss`)
  std::string resource;  // this server's canonical resource URI (the `aud` tokens must carry)
  std::vector<std::string> authorization_servers;  // metadata's list; empty: [issuer]
  std::string jwks_uri;  // empty: found through the issuer's RFC 8414 / OIDC discovery
  std::vector<std::string> scopes_supported;
  std::string required_scope;  // empty: none (the role rules decide)
  std::vector<OAuthRoleRule> role_rules;
  uint64_t jwks_refresh_min_s = 30;  // at most one JWKS/discovery fetch per this long
  uint64_t clock_skew_s = 60;
  uint64_t max_token_bytes = 8192;
  // A TLS-terminating proxy serves airlock: OAuth on a non-loopback plain
  // HTTP listener is allowed (else refused at start).
  bool behind_tls_proxy = false;
  OAuthIntrospectionConfig introspection;
};

struct HttpConfig {
  std::string listen = "127.0.0.1:8787";  // HOST:PORT for `airlock serve --http`
  // Extra Origin values (e.g. "https://app.example.com") accepted besides
  // localhost / 127.0.0.1 / [::1] on any port.
  std::vector<std::string> allowed_origins;
  // Extra Host header names (without port) accepted besides localhost /
  // 127.0.0.1 / [::1]. When empty and the server binds a non-loopback
  // address, the Host header is not checked.
  std::vector<std::string> allowed_hosts;
  std::string token_file;  // empty: no bearer token required
  std::string keys_file;   // API key store (`airlock keys`); empty: no per-person keys
  // Require an API key on every request, the keys in state.backend's store
  // (postgres: the database; sqlite: keys_file, default <state dir>/keys.json).
  // With sqlite, a non-empty keys_file alone also turns keys on.
  bool api_keys = false;
  // A token that lets non-loopback clients read /metrics (Authorization:
  // Bearer); empty: /metrics only for loopback clients.
  std::string metrics_token_file;
  uint64_t session_idle_timeout_s = 3600;
  int threads = 32;  // HTTP worker threads (one per open connection/stream)
  uint64_t max_sessions = 1024;
  // A request's body must arrive within body_timeout_s of its header, at
  // body_min_rate bytes/s or more (0: no minimum), before a worker thread
  // takes it; else 408 (docs/http.md).
  uint64_t body_timeout_s = 30;
  uint64_t body_min_rate = 1024;
  // The operators' console (docs/console.md): on when API keys are
  // (keys_file or api_keys; only an admin role's API key signs in) and
  // `console_enabled`.
  bool console_enabled = true;
  std::string console_path = "/console";  // "/" + [a-z0-9_-]{1,32}
  uint64_t console_idle_timeout_s = 900;  // a console sign-in ends this long after its last use
  uint64_t console_max_lifetime_s = 8 * 3600;  // ... and this long after it began, used or not
  // The console is reached over HTTPS (a TLS-terminating proxy in front):
  // its cookie gets Secure and the expected Origin is https://<Host>.
  bool console_https = false;
  // Failed console sign-ins per client address: after this many within
  // the window, sign-in answers 429 until the window ends.
  uint64_t console_signin_max_failures = 5;
  uint64_t console_signin_window_s = 60;
  ConsoleSsoConfig console_sso;  // console.sso
  // HTTPS without a proxy (server.http.tls, docs/security.md): both files
  // set, or neither (plain HTTP). Re-read on SIGHUP.
  struct Tls {
    std::string cert_file;  // PEM certificate chain
    std::string key_file;   // PEM private key
    std::string min_version = "1.2";  // "1.2" or "1.3"
    bool enabled() const { return !cert_file.empty(); }
  } tls;
  OAuthConfig oauth;
};

struct ServerConfig {
  HttpConfig http;
  uint64_t max_message_bytes = 4u << 20;  // one JSON-RPC message (stdio line / POST body)
  int max_concurrent_runs = 0;            // 0: number of cores
  int max_queued_runs = 16;
  // One caller (an API key's user, the token, an anonymous MCP session, the
  // stdio user) may hold at most this many of the run slots (0: slots - 1
  // when there are 2 or more slots, else 1) and this many places in the
  // queue (0: half the queue, at least 1); past either the call is busy.
  int max_concurrent_runs_per_caller = 0;
  int max_queued_runs_per_caller = 0;
  // On SIGTERM/SIGINT (HTTP): calls in flight get this long to finish, then
  // they are cancelled ("airlock is shutting down").
  uint64_t shutdown_grace_s = 30;
  // /readyz is 503 while any enabled connector (mcpServers) is down. Off by
  // default: run_code needs no connector, and a downstream server outside
  // airlock's control should not take the whole gateway out of rotation
  // (search_tools and execute name a down connector either way).
  bool readyz_requires_connectors = false;
  // Where airlock keeps its state (audit.db, codetools.db). Empty: the
  // default, ResolvedStateDir().
  std::string state_dir;
};

// "audit": the log of every run, call and admin action (audit/audit_log.h).
struct AuditConfig {
  bool enabled = true;
  std::string path;          // empty: <state dir>/audit.db
  bool fail_closed = true;   // refuse runs when the log cannot be written
  // "full": every record is on disk (fdatasync) before the run or call goes
  // on (~0.7 ms each on this machine kind, two per run). "normal": every
  // record is in the log file before the run or call goes on and survives
  // any crash of airlock; only a power loss or kernel crash can lose the
  // most recent records (SQLite WAL, synchronous=NORMAL).
  std::string sync = "normal";
};

struct LimitsConfig {
  uint64_t default_timeout_ms = 10000;
  uint64_t max_timeout_ms = 60000;
  uint64_t default_memory_mb = 256;
  uint64_t max_memory_mb = 2048;
  uint64_t max_output_bytes = 1u << 20;
  uint64_t max_files = 64;
  uint64_t max_file_bytes = 8u << 20;
  uint64_t max_total_file_bytes = 32u << 20;
  // All output files of one run together (read in the jail up to this and
  // no further; what is left out is listed in files_skipped).
  uint64_t max_output_files_total_bytes = 3u << 20;
};

// "pool": jails created ahead of time by the runner of `airlock serve`
// (runtimes/jail_pool.h). A pooled jail is built exactly as a cold one and
// used once; only the moment of creation moves off the request path.
struct PoolConfig {
  bool enabled = true;
  uint64_t max_per_language = 4;  // ready jails per language, tier and limits
  uint64_t min_per_language = 1;  // kept when idle once used; 0: drain to nothing
  uint64_t max_total = 16;        // ready jails in all
  uint64_t idle_seconds = 300;    // each idle period lowers a language's target by one
  // A refill waits up to this long for the runs in flight to end (0: never).
  uint64_t refill_defer_ms = 50;
  // Warmed at start-up, before the first run: "python" (native tier),
  // "python:wasm" (WASM tier).
  std::vector<std::string> warm = {"python"};
  // Memory limits (MiB), besides each language's default, whose jails are
  // pooled: configured shapes only. A run asking for any other memory_mb
  // runs cold, so callers cannot multiply pool shapes (or their metrics).
  std::vector<uint64_t> memory_mb;
  // Ready jails of python, javascript, ruby, php (and WASM-tier python) also
  // hold their interpreter, started and waiting for the program
  // (runtimes/prestart_harness.h).
  bool prestart = true;
};

// "build_cache": compiled programs (C, C++, TypeScript; both tiers) kept on
// disk by content (runtimes/build_cache.h), so the same program with the
// same input files is not compiled twice by `airlock serve`'s runner.
struct BuildCacheConfig {
  bool enabled = true;
  uint64_t max_mb = 256;  // least recently used entries are evicted past it
  std::string dir;        // empty: <state dir>/build-cache
  // Precompiled standard headers for C++ (runtimes/pch_cache.h), in
  // <dir>-pch, built on first use (or at start-up when "cpp" is in
  // pool.warm).
  bool precompiled_headers = true;
  // The WASM tier's interpreters compiled once (runtimes/wasm_code_store.h),
  // beside their modules in <WASM cache>-code (/var/cache/airlock/wasm-code),
  // written in the background at start-up.
  bool wasm_code = true;
};

// "sessions": a persistent interpreter and workspace across calls
// (docs/sessions.md).
struct SessionsConfig {
  bool enabled = true;
  uint64_t idle_timeout_s = 600;       // default idle timeout of a session
  uint64_t max_idle_timeout_s = 3600;  // the most open_session's timeout_s may ask
  uint64_t max_lifetime_s = 3600;      // from open, whatever the activity
  uint64_t max_per_caller = 4;
  uint64_t max_total = 0;              // 0: from the machine's memory (ResolvedMaxSessions)
  uint64_t max_cpu_s = 600;            // CPU time of a session's interpreter, all calls together
  // A session that can be paused (the WASM tier's Python) and has been idle
  // this long is paused by its runner (its state on disk, its jail gone)
  // until its next call; 0: never.
  uint64_t pause_after_s = 300;
  // Where paused sessions' images live (docs/sessions.md "Across a runner
  // restart"): "" for a private temporary directory that goes with the
  // runner; set, a 0700 directory of the runner's own that outlives it.
  std::string image_dir;
};

// "tasks": the MCP Tasks extension (io.modelcontextprotocol/tasks) for
// run_code and execute on the modern protocol (docs/mcp.md "Tasks").
struct TasksConfig {
  // "never": no tasks; "long": a call whose timeout (run_code timeout_ms,
  // execute limits.wall_ms) is at least min_timeout_ms, or above
  // limits.max_timeout_ms, becomes a task; "always": every such call does.
  // Only for clients that declare the extension on the request.
  std::string mode = "long";
  uint64_t min_timeout_ms = 30000;
  uint64_t max_timeout_ms = 600000;  // the most a task's run may ask (above limits.max_timeout_ms)
  uint64_t ttl_s = 3600;             // a task is gone this long after it was created
  uint64_t max_per_caller = 8;       // working tasks per caller
  uint64_t poll_interval_ms = 1000;  // the pollIntervalMs clients are told
  // A working task's lease, renewed by its gateway every third of it: a
  // gateway that dies leaves its tasks "failed" this long after at most.
  uint64_t lease_s = 30;
};

// An operator package directory (languages.packages.NAME; runtimes/package_dirs.h).
struct PackageDirConfig {
  std::string language;  // "python", "javascript" (TypeScript uses its) or "ruby"
  std::string path;      // absolute host directory, bound read-only
};

struct LanguagesConfig {
  std::vector<std::string> enabled;  // empty: every installed language
  // Named package directories, bound into the native jails of the runs of
  // endpoints that may use them (an endpoint's "packages", default all).
  std::map<std::string, PackageDirConfig> packages;
  // The isolation tier a run gets when it names none: "native" or "wasm".
  // A language without that tier runs in its other one (the result's
  // "isolation" says which); an endpoint's "isolation" list is the hard rule.
  std::string default_isolation = "native";
};

// "runner": where runs execute. With no hosts and no dns, the gateway spawns
// its local runner process (the default; a single machine needs nothing
// here). Otherwise every run goes over gRPC with mutual TLS to a runner host
// (`airlock runner-host`, docs/deploy.md); there is no local fallback.
struct RunnerTlsConfig {
  std::string ca_file;      // PEM: the CA that signed every peer's certificate
  std::string cert_file;    // PEM: this process's certificate (chain)
  std::string key_file;     // PEM: its private key
  // The name the runner hosts' certificates are checked against; empty: the
  // host part of each address.
  std::string server_name;
};

struct RunnerConfig {
  std::vector<std::string> hosts;  // static "HOST:PORT" runner hosts
  // "NAME:PORT": every address NAME resolves to is a runner host (e.g. a
  // Kubernetes headless Service), resolved again every dns_refresh_s.
  std::string dns;
  uint64_t dns_refresh_s = 10;
  RunnerTlsConfig tls;
  uint64_t health_interval_ms = 1000;  // a ping to every host this often
  uint64_t health_timeout_ms = 2000;   // no answer within this: the host is taken out
  uint64_t connect_timeout_ms = 3000;
  // Runs this gateway keeps in flight on one host (0: its own
  // server.max_concurrent_runs); the host bounds all gateways together
  // (`runner-host --max-concurrent`).
  uint64_t max_concurrent_per_host = 0;

  bool remote() const { return !hosts.empty() || !dns.empty(); }
};

// "state": where the audit log, the code-tool store and the API keys live.
// "sqlite" (default): files under the state dir (keys: server.http.keys_file).
// "postgres": one database several gateways share (docs/state.md).
struct StateConfig {
  std::string backend = "sqlite";
  // libpq connection string ("host=... dbname=... user=..."); libpq's PG*
  // environment variables fill what it leaves out (PGPASSWORD from a Secret).
  std::string postgres_dsn;
  std::string postgres_dsn_file;  // the connection string read from this file instead
};

struct Config {
  ServerConfig server;
  RunnerConfig runner;
  StateConfig state;
  LimitsConfig limits;
  LanguagesConfig languages;
  PoolConfig pool;
  BuildCacheConfig build_cache;
  SessionsConfig sessions;
  TasksConfig tasks;
  // Reserved for later features; stored verbatim (null when absent).
  nlohmann::json mcp_servers;  // "mcpServers"
  nlohmann::json endpoints;    // "endpoints"
  nlohmann::json roles;        // "roles"
  nlohmann::json access;       // "access" (governance/policy.h validates the three)
  AuditConfig audit;
  // "codeMode": {"enabled": true, "limits": {codemode::Limits fields}};
  // validated where it is used (codemode::LimitsFromJson). Null: defaults.
  nlohmann::json code_mode;

  // max_concurrent_runs with 0 resolved to the number of online cores.
  int ResolvedMaxConcurrentRuns() const;
  // server.max_*_runs_per_caller with their 0 defaults resolved.
  int ResolvedMaxConcurrentRunsPerCaller() const;
  int ResolvedMaxQueuedRunsPerCaller() const;
  // sessions.max_total, or: physical memory / (2 x limits.default_memory_mb),
  // at least 1 and at most 64.
  uint64_t ResolvedMaxSessions() const;
  // server.state_dir, or /var/lib/airlock for root, else
  // $XDG_STATE_HOME/airlock (default ~/.local/state/airlock).
  std::string ResolvedStateDir() const;
  // audit.path, or <state dir>/audit.db.
  std::string AuditDbPath() const;
  // <state dir>/codetools.db: stored code tools and their approvals.
  std::string CodeToolsDbPath() const;
  // build_cache.dir, or <state dir>/build-cache.
  std::string BuildCacheDir() const;
  // Precompiled C++ headers: <build cache dir>-pch (runtimes/pch_cache.h).
  std::string PchDir() const;
};

Config DefaultConfig();

// Reads and validates a JSON file (comments allowed). Errors name the path
// of the offending key, prefixed by the file name.
StatusOr<Config> LoadConfig(const std::string& path);

// Validates `j` (an object) over the defaults.
StatusOr<Config> ConfigFromJson(const nlohmann::json& j);
// Parses JSON text, then ConfigFromJson.
StatusOr<Config> ParseConfig(const std::string& text);

// The effective configuration as JSON (round-trips through ConfigFromJson).
nlohmann::json ConfigToJson(const Config& c);

// Every key with its type, default and meaning: {"server.http.listen": {...}}.
nlohmann::json ConfigSchemaDoc();

// Splits "HOST:PORT" / "[::1]:PORT" into host and port.
Status ParseListenAddress(const std::string& listen, std::string* host, int* port);

}  // namespace airlock::config

#endif  // AIRLOCK_CONFIG_CONFIG_H_
