// The gateway's end of one connection to a runner host: a RunnerHost.Channel
// stream presented as the local runner channel, so runner::RunnerClient
// drives a remote runner host exactly as it drives its own runner process.
//
// ConnectRunnerHost() makes a socketpair, opens the stream (mutual TLS), and
// starts two pump threads that translate frames (frame_codec.h) in each
// direction. It returns at once; the runner host's "hello" arriving on the
// channel is what says the link is up (RunnerClient waits for it, bounded by
// its start timeout). When the stream ends for any reason, the channel
// reaches EOF: RunnerClient fails that host's runs in flight with
// runner_unavailable and reconnects with backoff. DescribeLoss() of the
// returned handle says why ("UNAVAILABLE: Socket closed", a TLS failure...).
//
//   RunnerClientOptions o;
//   o.spawn = [=] { return ConnectRunnerHost(link_options); };
#ifndef AIRLOCK_REMOTE_REMOTE_LINK_H_
#define AIRLOCK_REMOTE_REMOTE_LINK_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <grpcpp/security/credentials.h>

#include "base/frame.h"
#include "base/status.h"
#include "runner/spawned_runner.h"

namespace airlock::remote {

struct LinkOptions {
  std::string address;      // HOST:PORT of the runner host
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // ClientCredentials(tls)
  std::string server_name;  // checked against the host's certificate; "" = the address's host
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  std::chrono::milliseconds connect_timeout{3000};  // TCP + TLS, per attempt
};

// Never blocks on the network. Errors only for local failures (socketpair).
StatusOr<runner::SpawnedRunner> ConnectRunnerHost(const LinkOptions& options);

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_REMOTE_LINK_H_
