#include "remote/runner_host_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "base/frame.h"
#include "base/unique_fd.h"
#include "remote/channel_settings.h"
#include "remote/frame_codec.h"
#include "remote/runner_host.grpc.pb.h"

namespace airlock::remote {
namespace {

void Log(const std::string& message) { std::fprintf(stderr, "airlock: runner host: %s\n", message.c_str()); }

using Stream = grpc::ServerReaderWriter<v1::RunnerMessage, v1::GatewayMessage>;

}  // namespace

// One gateway connection: its stream (written by its pump and by a drain,
// one at a time) and the sessions it opened that are its own (not shared).
struct RunnerHostServer::Peer {
  explicit Peer(Stream* s) : stream(s) {}

  // False once a write failed: the gateway is gone; later writes are dropped.
  bool Write(const v1::RunnerMessage& m) {
    std::lock_guard<std::mutex> lock(write_mu);
    if (writable && !stream->Write(m)) writable = false;
    return writable;
  }

  Stream* const stream;
  std::mutex write_mu;
  bool writable = true;
  std::mutex sessions_mu;  // guards the fields below
  std::set<std::string> sessions;
  bool drained = false;  // it said it moved what it could of its drain list
};

class RunnerHostServer::Service final : public v1::RunnerHost::Service {
 public:
  Service(runtimes::CodeExecutor& executor, const RunnerHostOptions& options, std::atomic<size_t>& streams)
      : executor_(executor),
        options_(options.runner),
        max_streams_(options.max_streams),
        grace_(options.shared_session_grace),
        streams_(streams) {
    reaper_ = std::thread([this] { ReapShared(); });
  }
  ~Service() override {
    {
      std::lock_guard<std::mutex> lock(shared_mu_);
      stopping_ = true;
    }
    shared_cv_.notify_all();
    reaper_.join();
  }

  size_t shared_sessions() {
    std::lock_guard<std::mutex> lock(shared_mu_);
    return shared_.size();
  }

  grpc::Status Channel(grpc::ServerContext* context, Stream* stream) override {
    const std::string who = PeerCommonName(*context->auth_context()) + "@" + context->peer();
    if (streams_.fetch_add(1) >= max_streams_) {
      streams_.fetch_sub(1);
      Log("refusing gateway " + who + ": " + std::to_string(max_streams_) + " connections already open");
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, "this runner host has too many gateway connections"};
    }
    struct Count {
      std::atomic<size_t>& n;
      ~Count() { n.fetch_sub(1); }
    } count{streams_};
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return {grpc::StatusCode::INTERNAL, "socketpair failed"};
    }
    UniqueFd ours(sv[0]);
    UniqueFd theirs(sv[1]);
    Log("gateway " + who + " connected");
    const size_t max_frame = options_.max_frame_bytes;
    // The sessions this stream opened (or forked, or moved here: an import's
    // last chunk): peer->sessions, closed when it ends, so a gateway that
    // dies leaves no session jail behind (its sessions are lost with it, as
    // they are when a local runner restarts).
    // Shared sessions (SessionSpec::shared) are not the stream's: they go
    // to the host-wide list instead, closed at their lifetime.
    struct Opening {
      std::string id;
      bool shared = false;
      uint64_t max_lifetime_s = 0;
    };
    auto peer = std::make_shared<Peer>(stream);
    std::map<uint64_t, Opening> opening;  // request id -> the session being opened (under peer->sessions_mu)
    Register(peer);
    struct Unregister {
      Service& service;
      std::shared_ptr<Peer> peer;
      ~Unregister() { service.Unregister(peer); }
    } unregister{*this, peer};

    // The stream's own runner loop: the same code a local runner runs.
    std::thread runner([&] {
      runner::RunnerMain(theirs.get(), executor_, options_);
      shutdown(theirs.get(), SHUT_RDWR);  // the pump below sees EOF
    });
    // Runner -> gateway. Keeps reading after a failed Write so the runner
    // loop never blocks on a full socket while it cancels its runs.
    std::thread up([&] {
      for (;;) {
        StatusOr<nlohmann::json> frame = ReadJsonFrame(ours.get(), max_frame);
        if (!frame.ok()) {
          if (frame.status().code() == StatusCode::kInvalidArgument) continue;
          break;
        }
        StatusOr<v1::RunnerMessage> m = RunnerMessageFromFrame(*frame);
        if (!m.ok()) {
          Log("dropping a frame for " + who + ": " + m.status().message());
          continue;
        }
        if (m->has_session()) {
          std::lock_guard<std::mutex> lock(peer->sessions_mu);
          auto it = opening.find(m->id());
          if (it != opening.end()) {
            if (m->session().ok() && it->second.shared) {
              AddShared(it->second.id, it->second.max_lifetime_s);
            } else if (m->session().ok()) {
              peer->sessions.insert(it->second.id);
            }
            opening.erase(it);
          }
        }
        (void)peer->Write(*m);
      }
    });
    // Gateway -> runner, on this thread, until the gateway's side ends.
    v1::GatewayMessage in;
    while (stream->Read(&in)) {
      if (in.has_drained()) {  // for this server, not the runner loop
        std::lock_guard<std::mutex> lock(peer->sessions_mu);
        peer->drained = true;
        continue;
      }
      StatusOr<nlohmann::json> frame = FrameFromGatewayMessage(in);
      if (!frame.ok()) {
        Log("dropping a message from " + who + ": " + frame.status().message());
        continue;
      }
      if (in.has_session_open() || in.has_session_fork() || (in.has_session_import() && in.session_import().last())) {
        // The runner loop refuses a malformed spec; this only notes the id
        // (a fork's: its copy's, which is the stream's or shared as an
        // opened session is).
        StatusOr<runtimes::SessionSpec> spec = runtimes::SessionSpecFromJson((*frame)["session"]);
        Opening o;
        if (spec.ok()) o = {.id = spec->id, .shared = spec->shared, .max_lifetime_s = spec->max_lifetime_s};
        std::lock_guard<std::mutex> lock(peer->sessions_mu);
        opening[in.id()] = std::move(o);
      } else if (in.has_session_close()) {
        {
          std::lock_guard<std::mutex> lock(peer->sessions_mu);
          peer->sessions.erase(in.session_close().session_id());
        }
        std::lock_guard<std::mutex> lock(shared_mu_);
        shared_.erase(in.session_close().session_id());
      }
      if (!WriteJsonFrame(ours.get(), *frame, max_frame).ok()) break;
    }
    // EOF for the runner loop: it cancels this stream's runs, waits for them
    // and returns; then the pump drains and ends.
    shutdown(ours.get(), SHUT_WR);
    runner.join();
    up.join();
    for (const std::string& id : peer->sessions) {
      if (executor_.CloseSession(id).ok()) Log("closed session " + id + " of gateway " + who);
    }
    Log("gateway " + who + (context->IsCancelled() ? " went away" : " disconnected"));
    return grpc::Status::OK;
  }

 // Tells every connected gateway that this host drains, each with the
  // sessions it is to move (its own; the shared ones dealt out in turn),
  // and waits until each listed session is closed here (moved) or its
  // gateway said it is done or went away, or `timeout` passed. Returns the
  // sessions still here.
  size_t DrainSessions(std::chrono::milliseconds timeout) {
    std::vector<std::shared_ptr<Peer>> peers;
    {
      std::lock_guard<std::mutex> lock(peers_mu_);
      peers = peers_;
    }
    std::vector<std::string> shared;
    {
      std::lock_guard<std::mutex> lock(shared_mu_);
      for (const auto& [id, when] : shared_) shared.push_back(id);
    }
    std::map<Peer*, std::vector<std::string>> lists;
    size_t turn = 0;
    for (const std::shared_ptr<Peer>& p : peers) {
      std::lock_guard<std::mutex> lock(p->sessions_mu);
      lists[p.get()].assign(p->sessions.begin(), p->sessions.end());
    }
    for (const std::string& id : shared) {
      if (peers.empty()) break;
      lists[peers[turn++ % peers.size()].get()].push_back(id);
    }
    std::vector<std::shared_ptr<Peer>> told;
    for (const std::shared_ptr<Peer>& p : peers) {
      const std::vector<std::string>& list = lists[p.get()];
      if (list.empty()) continue;
      v1::RunnerMessage m;
      m.set_id(0);
      for (const std::string& id : list) m.mutable_draining()->add_session_ids(id);
      if (p->Write(m)) told.push_back(p);
    }
    const Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      bool waiting = false;
      for (const std::shared_ptr<Peer>& p : told) {
        {
          std::lock_guard<std::mutex> lock(p->write_mu);
          if (!p->writable) continue;  // gone: its own sessions closed with it
        }
        std::lock_guard<std::mutex> lock(p->sessions_mu);
        if (p->drained) continue;
        for (const std::string& id : lists[p.get()]) {
          std::lock_guard<std::mutex> shared_lock(shared_mu_);
          if (p->sessions.count(id) || shared_.count(id)) waiting = true;
        }
      }
      if (!waiting || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    size_t left = 0;
    for (const std::shared_ptr<Peer>& p : peers) {
      std::lock_guard<std::mutex> lock(p->sessions_mu);
      left += p->sessions.size();
    }
    std::lock_guard<std::mutex> lock(shared_mu_);
    return left + shared_.size();
  }

 private:
  using Clock = std::chrono::steady_clock;

  void Register(const std::shared_ptr<Peer>& peer) {
    std::lock_guard<std::mutex> lock(peers_mu_);
    peers_.push_back(peer);
  }
  void Unregister(const std::shared_ptr<Peer>& peer) {
    std::lock_guard<std::mutex> lock(peers_mu_);
    peers_.erase(std::remove(peers_.begin(), peers_.end(), peer), peers_.end());
  }

  void AddShared(const std::string& id, uint64_t max_lifetime_s) {
    std::lock_guard<std::mutex> lock(shared_mu_);
    shared_[id] = Clock::now() + std::chrono::seconds(max_lifetime_s) + grace_;
  }

  // Closes shared sessions past their lifetime (plus the grace), once a
  // second: nothing outlives its lifetime when no gateway closes it.
  void ReapShared() {
    std::unique_lock<std::mutex> lock(shared_mu_);
    while (!stopping_) {
      shared_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
      if (stopping_) break;
      std::vector<std::string> due;
      const Clock::time_point now = Clock::now();
      for (auto it = shared_.begin(); it != shared_.end();) {
        if (it->second <= now) {
          due.push_back(it->first);
          it = shared_.erase(it);
        } else {
          ++it;
        }
      }
      lock.unlock();
      for (const std::string& id : due) {
        if (executor_.CloseSession(id).ok()) Log("closed shared session " + id + ": past its maximum lifetime");
      }
      lock.lock();
    }
  }

  runtimes::CodeExecutor& executor_;
  const runner::RunnerOptions options_;
  const size_t max_streams_;
  const std::chrono::milliseconds grace_;
  std::atomic<size_t>& streams_;

  std::mutex shared_mu_;
  std::condition_variable shared_cv_;
  bool stopping_ = false;
  std::map<std::string, Clock::time_point> shared_;  // shared session id -> when to close it here
  std::thread reaper_;

  std::mutex peers_mu_;
  std::vector<std::shared_ptr<Peer>> peers_;  // the gateways connected now
};

size_t RunnerHostServer::shared_sessions() const { return service_ ? service_->shared_sessions() : 0; }

size_t RunnerHostServer::DrainSessions(std::chrono::milliseconds timeout) {
  return service_ ? service_->DrainSessions(timeout) : 0;
}

StatusOr<std::unique_ptr<RunnerHostServer>> RunnerHostServer::Start(runtimes::CodeExecutor& executor,
                                                                    RunnerHostOptions options) {
  std::unique_ptr<RunnerHostServer> s(new RunnerHostServer());
  s->service_ = std::make_unique<Service>(executor, options, s->streams_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, ServerCredentials(options.tls), &s->port_);
  builder.RegisterService(s->service_.get());
  builder.SetMaxReceiveMessageSize(MaxMessageBytes(options.runner.max_frame_bytes));
  builder.SetMaxSendMessageSize(MaxMessageBytes(options.runner.max_frame_bytes));
  // Gateways ping idle connections (remote_link.cc); accept that rate.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, kKeepaliveTimeMs / 2);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  grpc::ResourceQuota quota("airlock-runner-host");
  quota.SetMaxThreads(static_cast<int>(options.max_streams * 2 + 8));
  builder.SetResourceQuota(quota);
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    return FailedPrecondition("cannot listen on " + options.listen + " (address in use or not local?)");
  }
  return s;
}

RunnerHostServer::~RunnerHostServer() { Shutdown(std::chrono::milliseconds(0)); }

void RunnerHostServer::Shutdown(std::chrono::milliseconds grace) {
  if (shut_down_ || !server_) return;
  shut_down_ = true;
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
}

}  // namespace airlock::remote
