// `airlock runner-host`: runs the jails for remote gateways (issue 22,
// docs/deploy.md). The same executor the local runner builds (pools, build
// cache, sessions), served over gRPC with mutual TLS by
// remote::RunnerHostServer; a plain-HTTP probe port for orchestrators.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "remote/probe_listener.h"
#include "remote/runner_host_server.h"
#include "remote/slot_limited_executor.h"
#include "remote/tls_files.h"

namespace airlock::cli {
namespace {

struct RunnerHostFlags {
  std::string listen;
  std::string config_path;
  std::string tls_ca, tls_cert, tls_key;
  std::string probe;
  std::string state_dir;
  int max_concurrent = 0;
  int max_gateways = 64;
  int drain_sessions_s = 30;
  bool allow_degraded = false;
};

int Fail(const std::string& message, int code) {
  std::cerr << "airlock runner-host: " << message << "\n";
  return code;
}

int RunnerHostMain(const RunnerHostFlags& flags) {
  StatusOr<config::Config> cfg = LoadConfigOrDefault(flags.config_path);
  if (!cfg.ok()) return Fail(cfg.status().message(), 2);
  if (!flags.state_dir.empty()) cfg->server.state_dir = flags.state_dir;
  std::string host;
  int port = 0;
  if (Status st = config::ParseListenAddress(flags.listen, &host, &port); !st.ok()) {
    return Fail("--listen: " + st.message(), 2);
  }
  // Mutual TLS is not optional: flags first, then the config's runner.tls.
  const std::string ca = flags.tls_ca.empty() ? cfg->runner.tls.ca_file : flags.tls_ca;
  const std::string cert = flags.tls_cert.empty() ? cfg->runner.tls.cert_file : flags.tls_cert;
  const std::string key = flags.tls_key.empty() ? cfg->runner.tls.key_file : flags.tls_key;
  StatusOr<remote::TlsFiles> tls = remote::ReadTlsFiles(ca, cert, key);
  if (!tls.ok()) return Fail("TLS (--tls-ca, --tls-cert, --tls-key are required): " + tls.status().message(), 2);

  // Stop signals go to sigwait only; block them before any thread starts.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);

  StatusOr<LocalRuntime> rt = MakeLocalRuntime(*cfg, flags.allow_degraded, /*pooled=*/true);
  if (!rt.ok()) return Fail("cannot run code on this host: " + rt.status().message(), 3);
  const size_t slots = flags.max_concurrent > 0 ? static_cast<size_t>(flags.max_concurrent)
                                                : static_cast<size_t>(cfg->ResolvedMaxConcurrentRuns());
  remote::SlotLimitedExecutor executor(*rt->executor, slots);

  std::atomic<bool> ready{false};
  remote::ProbeListener probe([&ready] { return ready.load(); });
  if (!flags.probe.empty()) {
    std::string probe_host;
    int probe_port = 0;
    if (Status st = config::ParseListenAddress(flags.probe, &probe_host, &probe_port); !st.ok()) {
      return Fail("--probe: " + st.message(), 2);
    }
    if (Status st = probe.Start(probe_host, probe_port); !st.ok()) return Fail(st.message(), 2);
  }

  remote::RunnerHostOptions options{.listen = flags.listen, .tls = *tls, .runner = {},
                                    .max_streams = static_cast<size_t>(std::max(1, flags.max_gateways))};
  options.runner.max_concurrent_runs = slots + static_cast<size_t>(cfg->server.max_queued_runs) + 64;
  StatusOr<std::unique_ptr<remote::RunnerHostServer>> server = remote::RunnerHostServer::Start(executor, options);
  if (!server.ok()) return Fail(server.status().message(), 2);
  ready.store(true);
  std::cerr << "airlock runner-host: serving on " << host << ":" << (*server)->port() << " (mutual TLS, "
            << slots << " runs at once, pid " << getpid() << ")\n";

  int sig = 0;
  sigwait(&stop, &sig);
  ready.store(false);
  if (flags.drain_sessions_s > 0 && (*server)->streams() > 0) {
    // Its sessions move to the gateways' other hosts (docs/sessions.md).
    std::cerr << "airlock runner-host: signal " << sig << ": draining (sessions move to other hosts; up to "
              << flags.drain_sessions_s << " s)\n";
    const size_t left = (*server)->DrainSessions(std::chrono::seconds(flags.drain_sessions_s));
    std::cerr << "airlock runner-host: " << left << " session(s) did not move and stay with this host\n";
  }
  std::cerr << "airlock runner-host: signal " << sig << ": stopping (runs in flight get 10 s)\n";
  (*server)->Shutdown(std::chrono::seconds(10));
  probe.Stop();
  return 0;
}

}  // namespace

Subcommand AddRunnerHostCommand(CLI::App& parent) {
  auto flags = std::make_shared<RunnerHostFlags>();
  CLI::App* cmd = parent.add_subcommand("runner-host", "Run the jails for remote gateways (gRPC with mutual TLS)");
  cmd->add_option("--listen", flags->listen, "HOST:PORT of the gRPC listener")->required();
  cmd->add_option("--config", flags->config_path, "Configuration file (JSON): limits, languages, pool, build_cache, sessions, runner.tls");
  cmd->add_option("--tls-ca", flags->tls_ca, "PEM CA that signed the gateways' client certificates (default: runner.tls.ca_file)");
  cmd->add_option("--tls-cert", flags->tls_cert, "PEM certificate of this runner host (default: runner.tls.cert_file)");
  cmd->add_option("--tls-key", flags->tls_key, "PEM private key of --tls-cert (default: runner.tls.key_file)");
  cmd->add_option("--probe", flags->probe, "Serve plain-HTTP /healthz and /readyz on HOST:PORT (for orchestrators)");
  cmd->add_option("--state-dir", flags->state_dir, "Directory for the build cache");
  cmd->add_option("--max-concurrent", flags->max_concurrent, "Runs executing at once, from all gateways (default: cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-gateways", flags->max_gateways, "Gateway connections at once (default 64)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--drain-sessions-s", flags->drain_sessions_s,
                  "On SIGTERM, how long gateways get to move this host's sessions elsewhere (0: none move; default 30)")
      ->check(CLI::Range(0, 3600));
  cmd->add_flag("--allow-degraded", flags->allow_degraded, "Run code even without cgroup limits");
  return {cmd, [flags] { return RunnerHostMain(*flags); }};
}

}  // namespace airlock::cli
