// The gateway's runner hosts (issue 22): a CodeExecutor over several remote
// runner hosts, each driven by its own runner::RunnerClient over a
// remote_link.h stream.
//
// Placement: a run goes to the least loaded host ((in flight + queued) /
// capacity, then fewest runs placed) among those that are connected, passed
// their last health check and offer the run's language in its tier. A
// session is opened on a host picked the same way and every later cell,
// checkpoint and the close go to that host (sessions stick to their host;
// a fork of a session lives on its source's host). With a shared
// session book (sessions/session_book.h), another gateway's fleet learns
// that host from the book (AdoptSession) and sends the session's cells
// there too; a host it does not have is reported by name and the session
// is lost.
//
// Health: every host is pinged each health_interval. A host that does not
// answer within health_timeout is taken out: its connection is dropped, so
// its runs in flight fail at once with runner_unavailable, and placement
// skips it until it answers again (RunnerClient reconnects with backoff). A
// host whose process dies is noticed sooner: its stream breaks and the same
// happens without waiting for a ping. New runs go to the other hosts.
//
// Draining: a runner host that gets SIGTERM tells its gateways so, each
// with a list of its sessions to move (remote/runner_host_server.h). The
// fleet then places nothing new there and, on threads of its own, moves
// the listed sessions, four at a time: it exports each image in chunks (the
// first pauses the session there and holds its calls), imports it on the
// host Pick chooses,
// records the new host (and tells the SessionMovedFn handler, so that the
// book follows) and closes it on the old host. Calls of a session being
// moved wait here until the move ends. A session that cannot move (it
// cannot be paused, no other host offers its language, the import is
// refused) is resumed where it was and ends with that host. A fleet made
// with FleetOptions::make_client handles no draining.
//
// Discovery: a static list, and/or a DNS name (a Kubernetes headless
// Service) resolved every dns_refresh; addresses that appear are connected,
// those that disappear take no new runs and are closed once idle.
//
// There is no fallback: with no usable host, Run() returns
// runner_unavailable and nothing runs in this process.
//
//   RunnerFleet fleet(FleetOptions{.hosts = {"10.0.0.7:7700"}, .tls = tls, ...});
//   fleet.Start();
//   RunResult r = fleet.Run(request, progress, cancel);  // r.runner_host says where
#ifndef AIRLOCK_REMOTE_RUNNER_FLEET_H_
#define AIRLOCK_REMOTE_RUNNER_FLEET_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/frame.h"
#include "remote/tls_files.h"
#include "runner/runner_backend.h"
#include "runner/runner_client.h"

namespace airlock::remote {

struct FleetOptions {
  std::vector<std::string> hosts;  // HOST:PORT
  std::string dns;                 // NAME:PORT; "" = none
  std::chrono::milliseconds dns_refresh{10000};
  TlsFiles tls;
  std::string server_name;  // expected name in the hosts' certificates; "" = each address's host
  std::chrono::milliseconds health_interval{1000};
  std::chrono::milliseconds health_timeout{2000};
  std::chrono::milliseconds connect_timeout{3000};
  size_t max_concurrent_per_host = 4;
  size_t max_queue_per_host = 16;
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  // How long a shared session's route (AdoptSession, or an OpenSession of a
  // shared spec) is kept without a call or close through this fleet.
  std::chrono::milliseconds adopted_ttl{std::chrono::minutes(10)};
  // Makes the client of one host; default: a RunnerClient over
  // ConnectRunnerHost with the options above. Tests inject their own.
  std::function<std::unique_ptr<runner::RunnerClient>(const std::string& address)> make_client;
};

class RunnerFleet : public runner::RunnerBackend {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RunnerFleet(FleetOptions options);
  ~RunnerFleet() override;  // Stop()

  RunnerFleet(const RunnerFleet&) = delete;
  RunnerFleet& operator=(const RunnerFleet&) = delete;

  // Connects to every host and runs one health round; OK once one host is
  // usable, Unavailable otherwise (it keeps trying in the background).
  Status Start() override;
  void Stop() override;

  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                          CancelToken& cancel, runtimes::BridgeHandler* bridge = nullptr) override;
  // The union over usable hosts (tiers merged).
  std::vector<runtimes::LanguageInfo> Languages() override;
  Status OpenSession(const runtimes::SessionSpec& spec) override;
  Status CloseSession(const std::string& id) override;
  // On the host holding the session (NotFound if unknown here).
  Status PauseSession(const std::string& id) override;
  Status ResumeSession(const std::string& id) override;
  // On the host holding `id`; the copy lives there too, and its later
  // cells, checkpoints and close go there (recorded as an OpenSession of
  // `copy` is).
  Status ForkSession(const std::string& id, const runtimes::SessionSpec& copy) override;
  // The address of the host holding session `id` ("" if unknown here).
  std::string SessionHost(const std::string& id) override;
  // Routes session `id` to the host at `host` from now on. Unavailable
  // (naming the host) if no host of this fleet has that address, after a
  // fresh DNS lookup when runner.dns is set. An adoption that is not
  // renewed (a call or a close through this gateway) is forgotten after
  // adopted_ttl: the book still knows the host.
  Status AdoptSession(const std::string& id, const std::string& host) override;
  // Records where moved sessions went (see "Draining" above).
  void SetSessionMovedHandler(SessionMovedFn handler) override;
  // {up, remote: true, in_flight, queued, max_concurrent, restarts, hosts: [{address, up, healthy,
  //  in_flight, queued, max_concurrent, runs, sessions, error, pool, ...}]}; from the last
  // health round, never blocking on a host.
  nlohmann::json Health() override;

  // Addresses of the hosts currently usable, for tests and logs.
  std::vector<std::string> UsableHosts();

 private:
  struct Host;

  std::unique_ptr<runner::RunnerClient> MakeClient(const std::string& address);
  // Adds hosts for new addresses and retires those no longer listed.
  void Reconcile(const std::vector<std::string>& addresses);
  std::vector<std::string> Addresses();  // static list + DNS
  void HealthRound();
  void BackgroundLoop();
  // The best usable host for `language` in `tier`; null if none.
  std::shared_ptr<Host> Pick(const std::string& language, const std::string& tier);
  std::string NoHostMessage(const std::string& language, const std::string& tier);
  // The host with this address, retired or not; null if none. Under mu_.
  std::shared_ptr<Host> FindHost(const std::string& address);
  // The host of session `id` (refreshing a route's use); null if unknown. Under mu_.
  std::shared_ptr<Host> SessionHostLocked(const std::string& id);
  // The host of session `id` (as SessionHostLocked, taking mu_), or
  // NotFound; Unavailable while stopping.
  StatusOr<std::shared_ptr<Host>> HostOfSession(const std::string& id);
  // Records that `spec.id` lives on `host` (an open or a fork). Under mu_.
  void RecordSessionLocked(const runtimes::SessionSpec& spec, const std::shared_ptr<Host>& host);
  // Waits (bounded) while session `id` is being moved. Under mu_ (`lock`).
  void WaitWhileMovingLocked(std::unique_lock<std::mutex>& lock, const std::string& id);
  // A host at `address` drains (RunnerClientOptions::on_draining): moves
  // `sessions` off it on a thread of movers_.
  void OnDraining(const std::string& address, const std::vector<std::string>& sessions);
  // Moves session `id` off `from` (see "Draining").
  Status MoveSession(const std::shared_ptr<Host>& from, const std::string& id);

  const FleetOptions options_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;

  std::mutex mu_;  // guards everything below
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  bool started_ = false;
  std::vector<std::shared_ptr<Host>> hosts_;
  // Sessions this fleet opened, not shared: session id -> its host. A
  // retired host is kept while it holds one.
  std::map<std::string, std::shared_ptr<Host>> sessions_;
  // Shared sessions (opened here with spec.shared, or adopted): their
  // routes, each with when it was last used; they do not keep a retired
  // host (the book, not this fleet, is their record).
  struct Route {
    std::shared_ptr<Host> host;
    Clock::time_point used;
  };
  std::map<std::string, Route> routes_;
  std::chrono::steady_clock::time_point next_dns_{};
  std::thread background_;
  // Moves (Draining): sessions being moved now, those moved recently (a
  // stale AdoptSession naming the old host is ignored), the threads moving
  // them (joined by Stop).
  std::condition_variable moved_cv_;
  std::set<std::string> moving_;
  struct Moved {
    std::string from, to;
    Clock::time_point at;
  };
  std::map<std::string, Moved> moved_;
  std::vector<std::thread> movers_;
  std::mutex moved_handler_mu_;  // guards moved_handler_ (held while it runs)
  SessionMovedFn moved_handler_;
};

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_RUNNER_FLEET_H_
