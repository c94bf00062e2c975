// `airlock runner-host`: the runner protocol served over gRPC with mutual
// TLS, so gateways on other machines can run code here (issue 22,
// docs/deploy.md).
//
// Each gateway connection is one RunnerHost.Channel stream. The server gives
// every stream its own RunnerMain (runner/runner_loop.h) on a private
// socketpair and pumps messages between the two, translating with
// frame_codec.h; so a remote run goes through exactly the code a local run
// does, against one CodeExecutor shared by all streams (one pool, one build
// cache, one set of sessions). When a stream ends (the gateway closed it,
// died, or its connection broke) its RunnerMain cancels that stream's runs
// and returns: nothing of it is left running. The sessions a stream opened
// (or forked: a fork is recorded as its copy's open) are closed then too, unless their spec says `shared`: those were opened
// by a gateway whose session book other gateways share (PostgreSQL), so a
// gateway that dies or is rolled does not take them along. Any stream may
// use or close a session. A shared session is closed here at the latest
// shared_session_grace after its spec's max_lifetime_s (the gateways close
// it sooner, through their book), so nothing leaks when every gateway is
// gone.
//
//   AIRLOCK_ASSIGN_OR_RETURN(auto server, RunnerHostServer::Start(executor, options));
//   ... wait for SIGTERM ...
//   server->Shutdown(std::chrono::seconds(10));
#ifndef AIRLOCK_REMOTE_RUNNER_HOST_SERVER_H_
#define AIRLOCK_REMOTE_RUNNER_HOST_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <grpcpp/server.h>

#include "base/status.h"
#include "remote/tls_files.h"
#include "runner/runner_loop.h"
#include "runtimes/code_executor.h"

namespace airlock::remote {

struct RunnerHostOptions {
  std::string listen;  // HOST:PORT; port 0 picks a free one (port())
  TlsFiles tls;
  runner::RunnerOptions runner;  // per stream (frame size, version)
  size_t max_streams = 64;       // gateway connections at once
  // How long past its max_lifetime_s a shared session may live here before
  // the runner host closes it itself (the gateways' reapers close it at its
  // lifetime; this is the backstop).
  std::chrono::milliseconds shared_session_grace{30000};
};

class RunnerHostServer {
 public:
  // Binds and starts serving; FailedPrecondition if the address cannot be
  // bound. `executor` must outlive the server.
  static StatusOr<std::unique_ptr<RunnerHostServer>> Start(runtimes::CodeExecutor& executor,
                                                           RunnerHostOptions options);
  ~RunnerHostServer();  // Shutdown(0)

  RunnerHostServer(const RunnerHostServer&) = delete;
  RunnerHostServer& operator=(const RunnerHostServer&) = delete;

  int port() const { return port_; }
  size_t streams() const { return streams_.load(); }
  // Shared sessions open here (opened by some stream and not closed yet).
  size_t shared_sessions() const;

  // Draining (SIGTERM): tells each connected gateway which of this host's
  // sessions to move elsewhere (a RunnerMessage.draining: its own sessions,
  // and the shared ones dealt out among the gateways) and waits until each
  // is closed here (moved: the gateway exported it, imported it on another
  // host and closed it here), its gateway said it is done or went away, or
  // `timeout` passed. New sessions are not refused meanwhile (the gateways
  // stop placing any here once told). Returns the sessions still here:
  // those that could not move stay, and end with the host (a persistent
  // sessions.image_dir keeps the pausable ones for a restart in place).
  size_t DrainSessions(std::chrono::milliseconds timeout);

  // Stops accepting; streams get `grace` to end on their own, then are
  // cancelled (their runs are cancelled and reaped). Idempotent.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  class Service;
  struct Peer;
  RunnerHostServer() = default;

  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<size_t> streams_{0};
  bool shut_down_ = false;
};

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_RUNNER_HOST_SERVER_H_
