#include "remote/remote_link.h"

#include <sys/socket.h>

#include <cstdio>
#include <mutex>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "base/unique_fd.h"
#include "remote/channel_settings.h"
#include "remote/frame_codec.h"
#include "remote/runner_host.grpc.pb.h"

namespace airlock::remote {
namespace {

void Log(const std::string& message) { std::fprintf(stderr, "airlock: runner link: %s\n", message.c_str()); }

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    default: return "ERROR";
  }
}

// One stream and its two pumps. Destroying it cancels the stream and joins
// both threads.
class Link {
 public:
  Link(const LinkOptions& options, UniqueFd ours) : address_(options.address), ours_(std::move(ours)),
        max_frame_(options.max_frame_bytes) {
    grpc::ChannelArguments args;
    if (!options.server_name.empty()) args.SetSslTargetNameOverride(options.server_name);
    args.SetMaxReceiveMessageSize(MaxMessageBytes(max_frame_));
    args.SetMaxSendMessageSize(MaxMessageBytes(max_frame_));
    // A fresh connection per link: a reconnect never reuses a dead one.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    // Notice a silently vanished host even with no run in flight (the
    // fleet's health checks catch it sooner).
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    // A host that does not answer at all fails the connection attempt
    // after this long (gRPC's own default is 20 s).
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, static_cast<int>(options.connect_timeout.count()));
    auto channel = grpc::CreateCustomChannel(options.address, options.credentials, args);
    stub_ = v1::RunnerHost::NewStub(channel);
    // The stream is opened on the pump thread: opening it waits for the
    // connection, and the caller must not.
    down_ = std::thread([this] { Down(); });
  }

  ~Link() {
    context_.TryCancel();
    shutdown(ours_.get(), SHUT_RDWR);
    if (down_.joinable()) down_.join();
  }

  std::string loss() {
    std::lock_guard<std::mutex> lock(mu_);
    return loss_.empty() ? "runner host " + address_ + ": the connection ended" : loss_;
  }

 private:
  // Runner host -> gateway; owns the stream's end.
  void Down() {
    stream_ = stub_->Channel(&context_);
    std::thread up([this] { Up(); });
    v1::RunnerMessage in;
    while (stream_->Read(&in)) {
      StatusOr<nlohmann::json> frame = FrameFromRunnerMessage(in);
      if (!frame.ok()) {
        Log(address_ + ": dropping a message: " + frame.status().message());
        continue;
      }
      if (!WriteJsonFrame(ours_.get(), *frame, max_frame_).ok()) break;
    }
    // Stop the other pump without ending the channel yet, so the reason is
    // recorded before the client sees EOF.
    shutdown(ours_.get(), SHUT_RD);
    up.join();
    grpc::Status st = stream_->Finish();
    {
      std::lock_guard<std::mutex> lock(mu_);
      loss_ = "runner host " + address_ + ": " + CodeName(st.error_code()) + ": " +
              (st.error_message().empty() ? "the stream ended" : st.error_message());
    }
    shutdown(ours_.get(), SHUT_RDWR);
  }

  // Gateway -> runner host.
  void Up() {
    for (;;) {
      StatusOr<nlohmann::json> frame = ReadJsonFrame(ours_.get(), max_frame_);
      if (!frame.ok()) {
        if (frame.status().code() == StatusCode::kInvalidArgument) continue;
        break;
      }
      StatusOr<v1::GatewayMessage> m = GatewayMessageFromFrame(*frame);
      if (!m.ok()) {
        Log(address_ + ": dropping a frame: " + m.status().message());
        continue;
      }
      if (!stream_->Write(*m)) break;
    }
    stream_->WritesDone();
  }

  const std::string address_;
  UniqueFd ours_;
  const size_t max_frame_;
  grpc::ClientContext context_;
  std::unique_ptr<v1::RunnerHost::Stub> stub_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::GatewayMessage, v1::RunnerMessage>> stream_;
  std::thread down_;
  std::mutex mu_;
  std::string loss_;
};

}  // namespace

StatusOr<runner::SpawnedRunner> ConnectRunnerHost(const LinkOptions& options) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair");
  UniqueFd client_end(sv[0]);
  auto link = std::make_shared<Link>(options, UniqueFd(sv[1]));
  std::weak_ptr<Link> weak = link;
  return runner::SpawnedRunner::Linked(std::move(client_end), link, [weak, address = options.address] {
    if (auto l = weak.lock()) return l->loss();
    return "runner host " + address + ": the connection was closed";
  });
}

}  // namespace airlock::remote
