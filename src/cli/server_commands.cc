// `airlock serve` (the MCP server; never runs code itself) and
// `airlock runner` (the process that owns the jails, started by serve).
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <map>
#include <thread>

#include "audit/audit_log.h"
#include "auth/key_store.h"
#include "base/frame.h"
#include "base/json_log_relay.h"
#include "base/self_exe.h"
#include "base/unique_fd.h"
#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "cli/config_reload.h"
#include "cli/graceful_stop.h"
#include "cli/serve_metrics.h"
#include "cli/serve_console_sso.h"
#include "cli/serve_oauth.h"
#include "cli/stdio_config.h"
#include "console/console_http.h"
#include "sessions/session_registry.h"
#include "state/state_stores.h"
#include "codemode/settings.h"
#include "codetools/code_tool_store.h"
#include "governance/policy.h"
#include "gateway/gateway.h"
#include "mcp/http_transport.h"
#include "mcp/metrics_listener.h"
#include "mcp/server.h"
#include "mcp/stdio_transport.h"
#include "remote/fleet_config.h"
#include "remote/runner_fleet.h"
#include "runner/runner_client.h"
#include "runner/runner_loop.h"
#include "runner/spawned_runner.h"

namespace airlock::cli {

int ServeCommand(const ServeOptions& options) {
  // Replies carry up to a few MiB (a run's output, serialized, copied).
  // glibc raises its mmap threshold each time such a block is freed, after
  // which the next ones come from the threads' arenas and stay resident:
  // RSS grew by ~10 MiB per 250 runs in the soak. A fixed threshold keeps
  // every block over 128 KiB mmap'ed, returned to the system when freed.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  // --log-format json: from here on every line on stderr, ours and our
  // children's, is one JSON object (base/json_log_relay.h). Destroyed last.
  std::unique_ptr<JsonLogRelay> json_log;
  if (options.log_format == "json") {
    StatusOr<std::unique_ptr<JsonLogRelay>> relay = JsonLogRelay::Start();
    if (!relay.ok()) {
      std::cerr << "airlock: --log-format json: " << relay.status().message() << "\n";
      return 2;
    }
    json_log = std::move(relay).value();
  }
  StatusOr<config::Config> cfg = LoadConfigOrDefault(options.config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock: " << cfg.status().message() << "\n";
    return 2;
  }
  // The command line's settings win over the file's (also when SIGHUP re-reads it).
  const auto apply_command_line = [&options](config::Config& c) {
    if (!options.http.empty()) c.server.http.listen = options.http;
    if (!options.token_file.empty()) c.server.http.token_file = options.token_file;
    if (!options.state_dir.empty()) c.server.state_dir = options.state_dir;
  };
  apply_command_line(*cfg);
  StatusOr<governance::Policy> policy = governance::Policy::FromJson(cfg->roles, cfg->endpoints, cfg->access);
  if (!policy.ok()) {
    std::cerr << "airlock: config: " << policy.status().message() << "\n";
    return 2;
  }
  StatusOr<codemode::Settings> code_mode = codemode::SettingsFromJson(cfg->code_mode);
  if (!code_mode.ok()) {
    std::cerr << "airlock: config: " << code_mode.status().message() << "\n";
    return 2;
  }
  // Code mode's connectors: airlock holds their sessions and secrets; no
  // jail ever sees them.
  StatusOr<std::unique_ptr<gateway::Gateway>> gw = gateway::Gateway::Create(cfg->mcp_servers);
  if (!gw.ok()) {
    std::cerr << "airlock: config: " << gw.status().message() << "\n";
    return 2;
  }

  // The runner gets the same configuration; it builds the jails.
  std::vector<std::string> runner_args;
  if (!options.config_path.empty()) runner_args = {"--config", options.config_path};
  if (options.allow_degraded) runner_args.push_back("--allow-degraded");
  runner::RunnerClientOptions ro;
  ro.max_concurrent = static_cast<size_t>(cfg->ResolvedMaxConcurrentRuns());
  ro.max_queue = static_cast<size_t>(cfg->server.max_queued_runs);
  if (!options.http.empty()) {  // stdio has one caller: no share to keep for others
    ro.max_concurrent_per_caller = static_cast<size_t>(cfg->ResolvedMaxConcurrentRunsPerCaller());
    ro.max_queue_per_caller = static_cast<size_t>(cfg->ResolvedMaxQueuedRunsPerCaller());
  }
  ro.spawn = [runner_args] { return runner::SpawnRunnerProcess("/proc/self/exe", runner_args); };

  // Block the stop signals before any thread starts so that only sigwait sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigset_t stop_or_reload = stop;
  sigaddset(&stop_or_reload, SIGHUP);
  // Over stdio, SIGTERM/SIGINT end the session as stdin's EOF does (a
  // signalfd wakes ServeStdio), so the runner stops cleanly too.
  pthread_sigmask(SIG_BLOCK, options.http.empty() ? &stop : &stop_or_reload, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // The local runner process, or the runner hosts of config "runner"
  // (remote/runner_fleet.h); neither runs code in this process.
  std::unique_ptr<runner::RunnerBackend> runner_backend;
  if (cfg->runner.remote()) {
    StatusOr<remote::FleetOptions> fleet = remote::FleetOptionsFromConfig(*cfg);
    if (!fleet.ok()) {
      std::cerr << "airlock: config.runner: " << fleet.status().message() << "\n";
      return 2;
    }
    runner_backend = std::make_unique<remote::RunnerFleet>(std::move(fleet).value());
  } else {
    runner_backend = std::make_unique<runner::RunnerClient>(ro);
  }
  runner::RunnerBackend& client = *runner_backend;
  // Every run is counted and timed (/metrics); the servers run code only
  // through this, which runs nothing itself.
  ServeMetrics serve_metrics(client);
  if (Status st = client.Start(); !st.ok()) {
    std::cerr << "airlock: warning: the code runner is not available (" << st.message()
              << "); runs will fail with runner_unavailable until it starts\n";
  }
  // Connect in the background: a slow downstream server must not delay the
  // MCP handshake; calls to a connector that is not up yet connect it.
  CancelToken stop_connecting;
  std::thread connect([g = gw->get(), &stop_connecting] {
    for (const auto& [name, st] : g->ConnectAll(std::chrono::seconds(30), &stop_connecting)) {
      if (!st.ok() && !stop_connecting.cancelled()) {
        std::cerr << "airlock: connector " << name << ": " << st.message() << " (will retry on use)\n";
      }
    }
  });
  struct JoinGuard {
    std::thread& t;
    CancelToken& cancel;
    ~JoinGuard() {
      cancel.Cancel();
      t.join();
    }
  } join_connect{connect, stop_connecting};
  // Governance: roles, endpoints, the audit log and the code tool store,
  // where state.backend keeps them (state/state_stores.h). With postgres,
  // a database that cannot be reached stops the start here.
  StatusOr<std::unique_ptr<audit::AuditLog>> audit_log = audit::AuditLog::Open(*cfg);
  if (!audit_log.ok()) {
    std::cerr << "airlock: " << audit_log.status().message()
              << " (set audit.fail_closed to false to serve without it)\n";
    return 2;
  }
  StatusOr<std::unique_ptr<codetools::CodeToolStore>> code_tools = state::OpenCodeToolStore(*cfg);
  if (!code_tools.ok()) {
    std::cerr << "airlock: code tools " << state::CodeToolStoreLocation(*cfg) << ": " << code_tools.status().message()
              << "\n";
    return 2;
  }
  // The MCP task table (docs/mcp.md "Tasks"): in memory, or shared in
  // PostgreSQL.
  std::shared_ptr<tasks::TaskStore> task_store;
  if (cfg->tasks.mode != "never") {
    StatusOr<std::shared_ptr<tasks::TaskStore>> opened = state::OpenTaskStore(*cfg);
    if (!opened.ok()) {
      std::cerr << "airlock: MCP tasks: " << opened.status().message() << "\n";
      return 2;
    }
    task_store = std::move(*opened);
  }
  // One book of sessions for every endpoint (each caller sees only its own):
  // in memory, or shared in PostgreSQL so that any gateway serves any
  // session (docs/sessions.md).
  std::unique_ptr<sessions::SessionRegistry> session_registry;
  if (cfg->sessions.enabled) {
    char host[256] = {};
    (void)gethostname(host, sizeof host - 1);
    StatusOr<std::shared_ptr<sessions::SessionBook>> book =
        state::OpenSessionBook(*cfg, std::string(host) + ":" + std::to_string(getpid()));
    if (!book.ok()) {
      std::cerr << "airlock: code sessions: " << book.status().message() << "\n";
      return 2;
    }
    session_registry = std::make_unique<sessions::SessionRegistry>(
        serve_metrics.executor(), cfg->sessions, cfg->ResolvedMaxSessions(), audit_log->get(), std::move(*book));
  }
  mcp::RunTracker runs;  // every endpoint's calls in flight
  if (json_log) {
    // The request log: one line per tool call.
    runs.SetEndObserver([](const mcp::RunInFlight& r, int64_t duration_ms, const mcp::CallOutcome& outcome) {
      nlohmann::json line = {{"run_id", r.run_id}, {"user", r.user}, {"role", r.role},
                             {"endpoint", r.endpoint}, {"client", r.client}, {"tool", r.tool},
                             {"duration_ms", duration_ms}, {"status", outcome.status}};
      if (!outcome.error_code.empty()) line["error_code"] = outcome.error_code;
      LogEvent("tool_call", std::move(line));
    });
  }
  (*audit_log)->SetObserver(serve_metrics.AuditObserver());
  serve_metrics.Watch({.runs = &runs, .sessions = session_registry.get(), .gateway = gw->get()});
  std::map<std::string, std::unique_ptr<mcp::McpServer>> servers;  // endpoint path -> server
  auto make_server = [&](const governance::Endpoint& e) {
    mcp::ServerOptions so{.endpoint = e.name,
                          .code_tools = code_tools->get(),
                          .audit = audit_log->get(),
                          .sessions = session_registry.get(),
                          .runs = &runs,
                          .tasks = task_store};
    return std::make_unique<mcp::McpServer>(*cfg, serve_metrics.executor(), gw->get(), so);
  };
  if (options.http.empty()) {
    const governance::Endpoint* e =
        options.endpoint.empty() ? policy->DefaultEndpoint() : policy->FindEndpoint(options.endpoint);
    if (e == nullptr) {
      std::cerr << "airlock: "
                << (options.endpoint.empty() ? "several endpoints are configured; pick one with --endpoint NAME"
                                             : "no endpoint named \"" + options.endpoint + "\"")
                << " (configured: " << policy->EndpointNames() << ")\n";
      return 2;
    }
    servers[e->path] = make_server(*e);
  } else {
    for (const governance::Endpoint& e : policy->endpoints()) servers[e.path] = make_server(e);
  }
  // Approved (or revoked) code tools appear without a restart:
  // notifications/tools/list_changed whenever the store changes. Polled
  // every 500 ms: a decision made through another gateway sharing the
  // database (or the CLI) reaches this one's clients within that.
  CancelToken stop_watching;
  std::thread watcher([&] {
    int64_t seen = (*code_tools)->Generation();
    for (;;) {
      pollfd wake{.fd = stop_watching.fd(), .events = POLLIN, .revents = 0};
      ::poll(&wake, 1, 500);
      if (stop_watching.cancelled()) break;
      const int64_t now = (*code_tools)->Generation();
      if (now == seen) continue;
      seen = now;
      for (auto& [path, server] : servers) server->NotifyToolsChanged();
    }
  });
  struct JoinGuard2 {
    std::thread& t;
    CancelToken& cancel;
    ~JoinGuard2() {
      cancel.Cancel();
      t.join();
    }
  } join_watcher{watcher, stop_watching};

  // /metrics on a listener of its own (--metrics), else on the HTTP listener.
  std::unique_ptr<mcp::MetricsListener> metrics_listener;
  if (!options.metrics.empty()) {
    std::string host, token;
    int port = 0;
    Status st = config::ParseListenAddress(options.metrics, &host, &port);
    if (st.ok() && !cfg->server.http.metrics_token_file.empty()) {
      StatusOr<std::string> t = mcp::ReadTokenFile(cfg->server.http.metrics_token_file);
      if (t.ok()) token = *t; else st = t.status();
    }
    if (st.ok()) {
      metrics_listener = std::make_unique<mcp::MetricsListener>(
          [&serve_metrics] { return serve_metrics.registry().Render(); }, token);
      st = metrics_listener->Start(host, port);
    }
    if (!st.ok()) {
      std::cerr << "airlock: --metrics " << options.metrics << ": " << st.message() << "\n";
      return 2;
    }
    std::cerr << "airlock: metrics at http://" << host << ":" << metrics_listener->port() << "/metrics\n";
  }

  if (options.http.empty()) {
    UniqueFd stop_fd(signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK));
    const int rc = mcp::ServeStdio(*servers.begin()->second, 0, 1, stop_fd.get());
    signalfd_siginfo info{};
    if (read(stop_fd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      std::cerr << "airlock: " << strsignal(static_cast<int>(info.ssi_signo)) << ": stopping\n";
    }
    return rc;  // the runner and the rest stop as they go out of scope
  }

  StatusOr<mcp::HttpOptions> http = mcp::HttpOptionsFromConfig(*cfg);
  if (!http.ok()) {
    std::cerr << "airlock: " << http.status().message() << "\n";
    return 2;
  }
  http->token_role = policy->token_role();
  if (!metrics_listener) http->metrics = [&serve_metrics] { return serve_metrics.registry().Render(); };
  // server.readyz_requires_connectors is read once, at start.
  http->ready = [&serve_metrics, g = gw->get(), connectors = cfg->server.readyz_requires_connectors] {
    return serve_metrics.Ready() && (!connectors || g->AllConnected());
  };
  http->anonymous_role = policy->anonymous_role();
  // API keys (server.http.api_keys, or a keys_file): every request is
  // checked against the store as it is now, so a revocation through any
  // gateway or the CLI is refused from the next request on.
  std::unique_ptr<auth::KeyStore> keys;
  if (state::ApiKeysEnabled(*cfg)) {
    StatusOr<std::unique_ptr<auth::KeyStore>> opened = state::OpenKeyStore(*cfg);
    if (!opened.ok()) {
      std::cerr << "airlock: API keys: " << opened.status().message() << "\n";
      return 2;
    }
    keys = std::move(opened).value();
    http->authenticate = [k = keys.get()](std::string_view token) -> std::optional<governance::Caller> {
      std::optional<auth::Identity> id = k->Authenticate(std::string(token));
      if (!id) return std::nullopt;
      return governance::Caller{.user = id->user, .role = id->role, .auth = "api_key", .key_id = id->key_id};
    };
  }
  // OAuth 2.1 access tokens (server.http.oauth), beside any API keys.
  StatusOr<std::unique_ptr<auth::oauth::OAuthAuthenticator>> oauth = InstallOAuth(*cfg, &*http, audit_log->get());
  if (!oauth.ok()) {
    std::cerr << "airlock: " << oauth.status().message() << "\n";
    return 2;
  }
  // The operators' console (docs/console.md): only with per-person keys,
  // since only an admin role's key signs in.
  std::unique_ptr<console::ConsoleHttp> operator_console;
  // Single sign-on (server.http.console.sso): administrators of the OpenID
  // provider sign in without an API key.
  StatusOr<std::unique_ptr<console::OidcSso>> console_sso = MakeConsoleSso(*cfg, *policy);
  if (!console_sso.ok()) {
    std::cerr << "airlock: " << console_sso.status().message() << "\n";
    return 2;
  }
  if ((keys || *console_sso) && cfg->server.http.console_enabled) {
    console::ConsoleSessionOptions co;
    co.cookie_path = cfg->server.http.console_path;
    co.lifetime = std::chrono::seconds(cfg->server.http.console_idle_timeout_s);
    co.max_lifetime = std::chrono::seconds(cfg->server.http.console_max_lifetime_s);
    console::ConsoleDeps deps{
        .authenticate = http->authenticate,
        .key_active = [k = keys.get()](std::string_view id) { return k == nullptr || k->IsActive(std::string(id)); },
        .policy = &*policy,
        .runs = &runs,
        .audit = audit_log->get(),
        .code_tools = code_tools->get(),
        .keys = keys.get(),
        .runner_health = [&client] { return client.Health(); },
        .connector_health =
            [g = gw->get()] {
              nlohmann::json list = nlohmann::json::array();
              for (const std::string& name : g->connector_names()) {
                if (const gateway::Connector* c = g->connector(name)) list.push_back(c->Health());
              }
              return list;
            },
        .session_stats =
            [r = session_registry.get(), &cfg]() -> nlohmann::json {
              if (r == nullptr) return {{"enabled", false}, {"open", 0}};
              return {{"enabled", true}, {"open", r->open_count()}, {"max_total", r->max_total()},
                      {"max_per_caller", cfg->sessions.max_per_caller}};
            },
        .tls = cfg->server.http.console_https || cfg->server.http.tls.enabled(),
        .sso = console_sso->get(),
        .sso_role = cfg->server.http.console_sso.role,
        .allow_key_signin = !*console_sso || cfg->server.http.console_sso.allow_key_signin};
    console::SignInThrottle::Options signin{
        .max_failures = cfg->server.http.console_signin_max_failures,
        .window = std::chrono::seconds(cfg->server.http.console_signin_window_s)};
    operator_console = std::make_unique<console::ConsoleHttp>(std::move(deps), co, std::move(signin));
    http->console = [c = operator_console.get()](const httplib::Request& req, httplib::Response& res) {
      c->Handle(req, res);
    };
  }
  std::map<std::string, mcp::McpServer*> by_path;
  for (auto& [path, server] : servers) by_path[path] = server.get();
  mcp::HttpTransport transport(by_path, *http);
  if (Status st = transport.Start(); !st.ok()) {
    std::cerr << "airlock: " << st.message() << "\n";
    return 1;
  }
  // stdio serves one endpoint: the one asked for, else the default, else
  // (several, none named "default") the first.
  StdioConfigInputs stdio_inputs{.executable = SelfExecutablePath(),
                                 .config_path = options.config_path,
                                 .state_dir = options.state_dir,
                                 .endpoint = options.endpoint,
                                 .allow_degraded = options.allow_degraded};
  if (stdio_inputs.endpoint.empty() && policy->DefaultEndpoint() == nullptr && !policy->endpoints().empty()) {
    stdio_inputs.endpoint = policy->endpoints().front().name;
  }
  std::cerr << "airlock " << AIRLOCK_VERSION << " serving MCP (Streamable HTTP) at";
  for (const auto& [path, server] : servers) std::cerr << " " << transport.url(path);
  std::cerr << "\n"
            << (http->tls ? "TLS " + http->tls->settings().min_version + "+ with " + http->tls->Current()->description() +
                                " (SIGHUP re-reads the certificate and key)\n"
                          : "")
            << (http->bearer_token.empty() ? "" : "clients must send: Authorization: Bearer <token from the token file>\n")
            << (keys ? "clients must send: Authorization: Bearer <an API key from `airlock keys create`>\n" : "")
            << (operator_console ? "operators' console (admin API keys): " + transport.url(operator_console->prefix()) + "/\n"
                                 : "")
            << "For MCP clients that launch servers over stdio, use:\n"
            << "  " << StdioClientConfig(stdio_inputs).dump() << "\n"
            << "Press Ctrl-C to stop." << std::endl;
  int sig = 0;
  for (;;) {
    sigwait(&stop_or_reload, &sig);
    if (sig != SIGHUP) break;
    if (http->tls) ReloadTls(http->tls.get());
    ReportReload(options.config_path, apply_command_line, *cfg, keys.get());
  }
  DrainAndStop(sig, transport, runs, client, std::chrono::seconds(cfg->server.shutdown_grace_s), &stop);
  return 0;
}

int RunnerCommand(int channel_fd, const std::string& config_path, bool allow_degraded) {
  // The server decides when the runner stops (it closes the channel, and the
  // runner cancels its runs); a Ctrl-C or a service manager's SIGTERM to
  // the whole process group must not kill the runner under runs the server
  // is still draining. PR_SET_PDEATHSIG still ends it with the server.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);  // a reload is the server's business
  StatusOr<config::Config> cfg = LoadConfigOrDefault(config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock runner: " << cfg.status().message() << "\n";
    return 2;
  }
  StatusOr<LocalRuntime> rt = MakeLocalRuntime(*cfg, allow_degraded, /*pooled=*/true);
  if (!rt.ok()) {
    const std::string why = "cannot run code on this host: " + rt.status().message();
    std::cerr << "airlock runner: " << why << "\n";
    // Instead of "hello": the server puts this cause into every
    // runner_unavailable result (a desktop client never shows our stderr).
    (void)WriteJsonFrame(channel_fd, {{"type", "fatal"}, {"message", why}});
    return 3;
  }
  runner::RunnerOptions ro;
  ro.pass_bridge_sockets = true;  // the channel is the spawning server's socketpair
  return runner::RunnerMain(channel_fd, *rt->executor, ro);
}

}  // namespace airlock::cli
