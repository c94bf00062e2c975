// `airlock serve` (the MCP server; never runs code itself) and
// `airlock runner` (the process that owns the jails, started by serve).
#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <thread>

#include "auth/key_store.h"
#include "base/self_exe.h"
#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "codemode/settings.h"
#include "gateway/gateway.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp/stdio_transport.h"
#include "runner/runner_client.h"
#include "runner/runner_loop.h"
#include "runner/spawned_runner.h"

namespace airlock::cli {

int ServeCommand(const ServeOptions& options) {
  StatusOr<config::Config> cfg = LoadConfigOrDefault(options.config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock: " << cfg.status().message() << "\n";
    return 2;
  }
  if (!options.http.empty()) cfg->server.http.listen = options.http;
  if (!options.token_file.empty()) cfg->server.http.token_file = options.token_file;
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
  ro.spawn = [runner_args] { return runner::SpawnRunnerProcess("/proc/self/exe", runner_args); };

  // Block the stop signals before any thread starts so that only sigwait sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  if (!options.http.empty()) pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  runner::RunnerClient client(ro);
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
  mcp::McpServer server(*cfg, client, gw->get());

  if (options.http.empty()) return mcp::ServeStdio(server, 0, 1);

  StatusOr<mcp::HttpOptions> http = mcp::HttpOptionsFromConfig(*cfg);
  if (!http.ok()) {
    std::cerr << "airlock: " << http.status().message() << "\n";
    return 2;
  }
  std::unique_ptr<auth::KeyStore> keys;
  if (!cfg->server.http.keys_file.empty()) {
    StatusOr<std::unique_ptr<auth::KeyStore>> opened = auth::KeyStore::Open(cfg->server.http.keys_file);
    if (!opened.ok()) {
      std::cerr << "airlock: " << opened.status().message() << "\n";
      return 2;
    }
    keys = std::move(opened).value();
    http->authenticate = [k = keys.get()](std::string_view token) {
      return k->Authenticate(std::string(token)).has_value();
    };
  }
  mcp::HttpTransport transport(server, *http);
  if (Status st = transport.Start(); !st.ok()) {
    std::cerr << "airlock: " << st.message() << "\n";
    return 1;
  }
  const std::string self = SelfExecutablePath();
  std::cerr << "airlock " << AIRLOCK_VERSION << " serving MCP (Streamable HTTP) at " << transport.url() << "\n"
            << (http->bearer_token.empty() ? "" : "clients must send: Authorization: Bearer <token from the token file>\n")
            << "For MCP clients that launch servers over stdio, use:\n"
            << "  {\"mcpServers\": {\"airlock\": {\"command\": \"" << self << "\", \"args\": [\"serve\"]}}}\n"
            << "Press Ctrl-C to stop." << std::endl;
  int sig = 0;
  sigwait(&stop, &sig);
  std::cerr << "airlock: stopping\n";
  transport.Stop();
  client.Stop();
  return 0;
}

int RunnerCommand(int channel_fd, const std::string& config_path, bool allow_degraded) {
  StatusOr<config::Config> cfg = LoadConfigOrDefault(config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock runner: " << cfg.status().message() << "\n";
    return 2;
  }
  StatusOr<LocalRuntime> rt = MakeLocalRuntime(*cfg, allow_degraded);
  if (!rt.ok()) {
    std::cerr << "airlock runner: cannot run code on this host: " << rt.status().message() << "\n";
    return 3;
  }
  runner::RunnerOptions ro;
  return runner::RunnerMain(channel_fd, *rt->executor, ro);
}

}  // namespace airlock::cli
