#include "remote/runner_fleet.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iterator>
#include <set>

#include "config/config.h"
#include "remote/remote_link.h"

namespace airlock::remote {
namespace {

using Json = nlohmann::json;
using runtimes::InternalErrorResult;
using runtimes::LanguageInfo;
using Clock = std::chrono::steady_clock;

void Log(const std::string& message) { std::fprintf(stderr, "airlock: runner fleet: %s\n", message.c_str()); }

// Sessions moved at once off one draining host.
constexpr size_t kConcurrentMoves = 4;

bool Offers(const std::vector<LanguageInfo>& languages, const std::string& language, const std::string& tier) {
  for (const LanguageInfo& l : languages) {
    if (l.name == language) return std::find(l.tiers.begin(), l.tiers.end(), tier) != l.tiers.end();
  }
  return false;
}

// "NAME:PORT" -> every address NAME resolves to, as "IP:PORT" / "[IPv6]:PORT".
StatusOr<std::vector<std::string>> Resolve(const std::string& dns) {
  std::string name;
  int port = 0;
  AIRLOCK_RETURN_IF_ERROR(config::ParseListenAddress(dns, &name, &port));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(name.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) return Unavailable("cannot resolve " + name + ": " + gai_strerror(rc));
  std::set<std::string> out;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    char host[NI_MAXHOST];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) continue;
    const std::string h = host;
    out.insert((h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + std::to_string(port));
  }
  freeaddrinfo(res);
  return std::vector<std::string>(out.begin(), out.end());
}

}  // namespace

struct RunnerFleet::Host {
  std::string address;
  std::unique_ptr<runner::RunnerClient> client;
  // Guarded by RunnerFleet::mu_.
  bool healthy = false;
  bool retired = false;  // no longer listed (DNS): no new runs; closed once idle
  bool draining = false;  // it said so (SIGTERM): no new runs; its sessions move; until it reconnects
  std::string error;
  std::vector<LanguageInfo> languages;
  Json health = Json::object();  // the runner host's own Health(), last round it was asked
  uint64_t runs = 0;             // placed here
  uint64_t rounds = 0;           // health rounds seen
};

RunnerFleet::RunnerFleet(FleetOptions options) : options_(std::move(options)) {
  credentials_ = ClientCredentials(options_.tls);
}

RunnerFleet::~RunnerFleet() { Stop(); }

std::unique_ptr<runner::RunnerClient> RunnerFleet::MakeClient(const std::string& address) {
  if (options_.make_client) return options_.make_client(address);
  runner::RunnerClientOptions ro;
  ro.max_concurrent = options_.max_concurrent_per_host;
  ro.max_queue = options_.max_queue_per_host;
  ro.start_timeout = options_.connect_timeout + std::chrono::seconds(2);  // TCP, TLS, then "hello"
  ro.health_timeout = options_.health_timeout;
  ro.languages_timeout = options_.health_timeout + std::chrono::seconds(3);
  ro.restart_backoff_min = std::chrono::milliseconds(200);
  ro.restart_backoff_max = std::chrono::milliseconds(2000);
  ro.max_frame_bytes = options_.max_frame_bytes;
  LinkOptions lo{.address = address,
                 .credentials = credentials_,
                 .server_name = options_.server_name,
                 .max_frame_bytes = options_.max_frame_bytes,
                 .connect_timeout = options_.connect_timeout};
  ro.spawn = [lo] { return ConnectRunnerHost(lo); };
  ro.runner_host = address;
  ro.on_draining = [this, address](const std::vector<std::string>& sessions) { OnDraining(address, sessions); };
  return std::make_unique<runner::RunnerClient>(ro);
}

std::vector<std::string> RunnerFleet::Addresses() {
  std::vector<std::string> out = options_.hosts;
  if (!options_.dns.empty()) {
    StatusOr<std::vector<std::string>> resolved = Resolve(options_.dns);
    if (resolved.ok()) {
      out.insert(out.end(), resolved->begin(), resolved->end());
    } else {
      Log(resolved.status().message() + " (keeping the hosts already known)");
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& h : hosts_) {
        if (!h->retired) out.push_back(h->address);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void RunnerFleet::Reconcile(const std::vector<std::string>& addresses) {
  std::vector<std::shared_ptr<Host>> added;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    for (auto& h : hosts_) {
      const bool listed = std::find(addresses.begin(), addresses.end(), h->address) != addresses.end();
      if (!listed && !h->retired) Log("runner host " + h->address + " is no longer listed; it takes no new runs");
      if (listed && h->retired) Log("runner host " + h->address + " is listed again");
      h->retired = !listed;
    }
    for (const std::string& a : addresses) {
      auto known = std::find_if(hosts_.begin(), hosts_.end(), [&](const auto& h) { return h->address == a; });
      if (known != hosts_.end()) continue;
      auto h = std::make_shared<Host>();
      h->address = a;
      h->client = MakeClient(a);
      hosts_.push_back(h);
      added.push_back(h);
    }
  }
  for (auto& h : added) {
    Log("runner host " + h->address + " added");
    h->client->Connect();
  }
}

void RunnerFleet::HealthRound() {
  std::vector<std::shared_ptr<Host>> hosts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hosts = hosts_;
  }
  // Every host at once: one that hangs must not delay the others' checks.
  std::vector<std::thread> checks;
  for (const auto& h : hosts) {
    checks.emplace_back([this, h] {
      const runner::RunnerClient::Load load = h->client->CurrentLoad();
      Status st = load.ready ? h->client->Ping(options_.health_timeout) : Unavailable("not connected");
      if (!st.ok() && load.ready) {
        // Connected but silent: take it out now. Its runs in flight fail
        // with runner_unavailable; the client reconnects with backoff.
        h->client->DropConnection("runner host " + h->address + " did not answer a health check within " +
                                  std::to_string(options_.health_timeout.count()) + " ms (" + st.message() + ")");
      }
      uint64_t round;
      bool need_languages;
      {
        std::lock_guard<std::mutex> lock(mu_);
        round = h->rounds++;
        need_languages = h->languages.empty() || round % 30 == 0;
      }
      std::vector<LanguageInfo> languages;
      Json health;
      if (st.ok() && need_languages) languages = h->client->Languages();
      if (st.ok() && round % 5 == 0) health = h->client->Health();
      std::lock_guard<std::mutex> lock(mu_);
      if (!load.ready) h->draining = false;  // it went away; what answers next is a new process
      const bool was = h->healthy;
      h->healthy = st.ok();
      h->error = st.ok() ? "" : st.message();
      if (!languages.empty()) h->languages = std::move(languages);
      if (health.is_object()) h->health = std::move(health);
      if (was && !h->healthy) Log("runner host " + h->address + " taken out: " + h->error);
      if (!was && h->healthy) Log("runner host " + h->address + " is up");
    });
  }
  for (std::thread& t : checks) t.join();
}

void RunnerFleet::BackgroundLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      stop_cv_.wait_for(lock, options_.health_interval, [&] { return stopping_; });
      if (stopping_) return;
    }
    if (!options_.dns.empty() && Clock::now() >= next_dns_) {
      next_dns_ = Clock::now() + options_.dns_refresh;
      Reconcile(Addresses());
    }
    HealthRound();
    // Close retired hosts once nothing of theirs is left.
    std::vector<std::shared_ptr<Host>> closing;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const Clock::time_point now = Clock::now();
      for (auto it = routes_.begin(); it != routes_.end();) {
        it = now - it->second.used > options_.adopted_ttl ? routes_.erase(it) : std::next(it);
      }
      for (auto it = moved_.begin(); it != moved_.end();) {
        it = now - it->second.at > options_.adopted_ttl ? moved_.erase(it) : std::next(it);
      }
      for (auto it = hosts_.begin(); it != hosts_.end();) {
        const auto& h = *it;
        const runner::RunnerClient::Load load = h->client->CurrentLoad();
        const bool has_session = std::any_of(sessions_.begin(), sessions_.end(),
                                             [&](const auto& s) { return s.second == h; });
        if (h->retired && load.in_flight == 0 && load.queued == 0 && !has_session) {
          closing.push_back(h);
          for (auto r = routes_.begin(); r != routes_.end();) r = r->second.host == h ? routes_.erase(r) : std::next(r);
          it = hosts_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& h : closing) {
      Log("runner host " + h->address + " removed");
      h->client->Stop();
    }
  }
}

Status RunnerFleet::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_ || stopping_) return OkStatus();
    started_ = true;
  }
  next_dns_ = Clock::now() + options_.dns_refresh;
  Reconcile(Addresses());
  // Wait (bounded) for the first connections, then check them once.
  const auto deadline = Clock::now() + options_.connect_timeout + std::chrono::seconds(2);
  for (;;) {
    bool all = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& h : hosts_) all = all && h->client->CurrentLoad().ready;
    }
    if (all || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  HealthRound();
  background_ = std::thread([this] { BackgroundLoop(); });
  if (!UsableHosts().empty()) return OkStatus();
  std::string errors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& h : hosts_) errors += (errors.empty() ? "" : "; ") + h->address + ": " + h->error;
  }
  return Unavailable("no runner host answered" + (errors.empty() ? std::string() : " (" + errors + ")"));
}

void RunnerFleet::Stop() {
  std::vector<std::shared_ptr<Host>> hosts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && hosts_.empty()) return;
    stopping_ = true;
    stop_cv_.notify_all();
    hosts.swap(hosts_);
    sessions_.clear();
    routes_.clear();
  }
  if (background_.joinable()) background_.join();
  std::vector<std::thread> movers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    movers.swap(movers_);
  }
  for (std::thread& t : movers) t.join();  // each stops at its next step
  for (auto& h : hosts) h->client->Stop();
}

std::vector<std::string> RunnerFleet::UsableHosts() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& h : hosts_) {
    if (h->healthy && !h->retired && !h->draining && h->client->CurrentLoad().ready) out.push_back(h->address);
  }
  return out;
}

std::shared_ptr<RunnerFleet::Host> RunnerFleet::Pick(const std::string& language, const std::string& tier) {
  std::shared_ptr<Host> best;
  double best_load = 0;
  for (const auto& h : hosts_) {
    if (h->retired || h->draining || !h->healthy || !Offers(h->languages, language, tier)) continue;
    const runner::RunnerClient::Load load = h->client->CurrentLoad();
    if (!load.ready) continue;
    const double l = static_cast<double>(load.in_flight + load.queued) / std::max<size_t>(1, load.max_concurrent);
    if (!best || l < best_load || (l == best_load && h->runs < best->runs)) {
      best = h;
      best_load = l;
    }
  }
  if (best) ++best->runs;
  return best;
}

std::string RunnerFleet::NoHostMessage(const std::string& language, const std::string& tier) {
  size_t up = 0;
  for (const auto& h : hosts_) up += h->healthy && !h->retired && !h->draining ? 1 : 0;
  std::string message = "no runner host can take a " + language + " (" + tier + ") run: " + std::to_string(up) +
                        " of " + std::to_string(hosts_.size()) + " hosts up";
  if (up > 0) message += ", none of them offers it";
  return message + "; the run was not started";
}

runtimes::RunResult RunnerFleet::Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                                     CancelToken& cancel, runtimes::BridgeHandler* bridge) {
  const std::string tier = request.isolation.empty() ? "native" : request.isolation;
  std::shared_ptr<Host> host;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!request.session_id.empty()) WaitWhileMovingLocked(lock, request.session_id);
    if (stopping_) {
      return InternalErrorResult(request.language, "runner_unavailable",
                                 "airlock is shutting down; the run was not started");
    }
    if (!request.session_id.empty()) {
      host = SessionHostLocked(request.session_id);
      if (!host) {
        return InternalErrorResult(request.language, "E_SESSION_NOT_FOUND", "no session with this id is open");
      }
      ++host->runs;
    } else {
      host = Pick(request.language, tier);
      if (!host) return InternalErrorResult(request.language, "runner_unavailable", NoHostMessage(request.language, tier));
    }
  }
  runtimes::RunResult r = host->client->Run(request, progress, cancel, bridge);
  r.runner_host = host->address;
  return r;
}

std::vector<LanguageInfo> RunnerFleet::Languages() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LanguageInfo> out;
  for (const auto& h : hosts_) {
    if (!h->healthy || h->retired) continue;
    for (const LanguageInfo& l : h->languages) {
      auto same = std::find_if(out.begin(), out.end(), [&](const LanguageInfo& o) { return o.name == l.name; });
      if (same == out.end()) {
        out.push_back(l);
        continue;
      }
      for (const std::string& t : l.tiers) {
        if (std::find(same->tiers.begin(), same->tiers.end(), t) == same->tiers.end()) same->tiers.push_back(t);
      }
      for (const auto& [t, d] : l.tier_defaults) same->tier_defaults.emplace(t, d);  // the first host's stand
      same->sessions = same->sessions || l.sessions;
      for (const std::string& t : l.session_tiers) {
        if (std::find(same->session_tiers.begin(), same->session_tiers.end(), t) == same->session_tiers.end()) {
          same->session_tiers.push_back(t);
        }
      }
    }
  }
  return out;
}

Status RunnerFleet::OpenSession(const runtimes::SessionSpec& spec) {
  const std::string tier = spec.isolation.empty() ? "native" : spec.isolation;
  std::shared_ptr<Host> host;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Unavailable("airlock is shutting down");
    if (sessions_.count(spec.id) || routes_.count(spec.id)) {
      return InvalidArgument("session id " + spec.id + " is already open");
    }
    host = Pick(spec.language, tier);
    if (!host) return Unavailable(NoHostMessage(spec.language, tier));
  }
  AIRLOCK_RETURN_IF_ERROR(host->client->OpenSession(spec));
  std::lock_guard<std::mutex> lock(mu_);
  RecordSessionLocked(spec, host);
  return OkStatus();
}

void RunnerFleet::RecordSessionLocked(const runtimes::SessionSpec& spec, const std::shared_ptr<Host>& host) {
  if (spec.shared) {
    routes_[spec.id] = Route{host, Clock::now()};
  } else {
    sessions_[spec.id] = host;
  }
}

StatusOr<std::shared_ptr<RunnerFleet::Host>> RunnerFleet::HostOfSession(const std::string& id) {
  std::unique_lock<std::mutex> lock(mu_);
  WaitWhileMovingLocked(lock, id);
  if (stopping_) return Unavailable("airlock is shutting down");
  std::shared_ptr<Host> host = SessionHostLocked(id);
  if (!host) return NotFound("no such session");
  return host;
}

Status RunnerFleet::PauseSession(const std::string& id) {
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<Host> host, HostOfSession(id));
  return host->client->PauseSession(id);
}

Status RunnerFleet::ResumeSession(const std::string& id) {
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<Host> host, HostOfSession(id));
  return host->client->ResumeSession(id);
}

Status RunnerFleet::ForkSession(const std::string& id, const runtimes::SessionSpec& copy) {
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<Host> host, HostOfSession(id));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sessions_.count(copy.id) || routes_.count(copy.id)) {
      return InvalidArgument("session id " + copy.id + " is already open");
    }
  }
  AIRLOCK_RETURN_IF_ERROR(host->client->ForkSession(id, copy));
  std::lock_guard<std::mutex> lock(mu_);
  RecordSessionLocked(copy, host);
  return OkStatus();
}

Status RunnerFleet::CloseSession(const std::string& id) {
  std::shared_ptr<Host> host;
  {
    std::unique_lock<std::mutex> lock(mu_);
    WaitWhileMovingLocked(lock, id);
    host = SessionHostLocked(id);
    if (!host) return NotFound("no such session");
    sessions_.erase(id);
    routes_.erase(id);
  }
  return host->client->CloseSession(id);
}

std::shared_ptr<RunnerFleet::Host> RunnerFleet::FindHost(const std::string& address) {
  for (const auto& h : hosts_) {
    if (h->address == address) return h;
  }
  return nullptr;
}

std::shared_ptr<RunnerFleet::Host> RunnerFleet::SessionHostLocked(const std::string& id) {
  if (auto it = sessions_.find(id); it != sessions_.end()) return it->second;
  if (auto it = routes_.find(id); it != routes_.end()) {
    it->second.used = Clock::now();
    return it->second.host;
  }
  return nullptr;
}

std::string RunnerFleet::SessionHost(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Host> host = SessionHostLocked(id);
  return host ? host->address : "";
}

Status RunnerFleet::AdoptSession(const std::string& id, const std::string& address) {
  auto unknown = [&] {
    return Unavailable("the runner host " + (address.empty() ? std::string("(none recorded)") : address) +
                       " that holds it is not among this gateway's runner hosts (it is gone, or not listed here)");
  };
  bool looked_up = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stopping_) return Unavailable("airlock is shutting down");
      WaitWhileMovingLocked(lock, id);
      std::shared_ptr<Host> known = SessionHostLocked(id);
      if (known && known->address == address) return OkStatus();
      // The session just moved here from `address`: a book row read before
      // the move names its old host; the move is newer.
      if (auto m = moved_.find(id); known && m != moved_.end() && m->second.from == address &&
                                    m->second.to == known->address) {
        return OkStatus();
      }
      std::shared_ptr<Host> host = address.empty() ? nullptr : FindHost(address);
      if (host) {
        sessions_.erase(id);  // the book says where it is
        routes_[id] = Route{host, Clock::now()};
        return OkStatus();
      }
      if (looked_up || options_.dns.empty() || address.empty()) return unknown();
    }
    // A host another gateway found first (DNS): look again before giving up.
    looked_up = true;
    Reconcile(Addresses());
  }
}

void RunnerFleet::SetSessionMovedHandler(SessionMovedFn handler) {
  std::lock_guard<std::mutex> lock(moved_handler_mu_);
  moved_handler_ = std::move(handler);
}

void RunnerFleet::WaitWhileMovingLocked(std::unique_lock<std::mutex>& lock, const std::string& id) {
  // Bounded: a move is a few chunk round trips, each bounded by the
  // clients' checkpoint timeout; past this the call goes where the book says.
  moved_cv_.wait_for(lock, std::chrono::seconds(60), [&] { return stopping_ || !moving_.count(id); });
}

void RunnerFleet::OnDraining(const std::string& address, const std::vector<std::string>& sessions) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Host> from = FindHost(address);
  if (!from || stopping_) return;
  if (!from->draining) Log("runner host " + address + " is draining: it takes no new runs; moving " +
                           std::to_string(sessions.size()) + " session(s) off it");
  from->draining = true;
  // On the client's reading thread: the moves (round trips on that very
  // client) run on their own thread.
  movers_.emplace_back([this, from, sessions] {
    // A few moves at once: each is mostly waiting on two hosts in turn.
    std::atomic<size_t> next{0}, moved{0};
    auto work = [&] {
      for (size_t i = next++; i < sessions.size(); i = next++) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (stopping_) return;
        }
        const std::string& id = sessions[i];
        if (Status st = MoveSession(from, id); st.ok()) {
          ++moved;
        } else {
          Log("session " + id + " stays on draining runner host " + from->address + ": " + st.message());
        }
      }
    };
    std::vector<std::thread> helpers;
    for (size_t i = 1; i < std::min(kConcurrentMoves, sessions.size()); ++i) helpers.emplace_back(work);
    work();
    for (std::thread& t : helpers) t.join();
    Log("moved " + std::to_string(moved.load()) + " of " + std::to_string(sessions.size()) +
        " session(s) off draining runner host " + from->address);
    from->client->SayDrained();
  });
}

Status RunnerFleet::MoveSession(const std::shared_ptr<Host>& from, const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!moving_.insert(id).second) return FailedPrecondition("it is being moved already");
  }
  struct Done {
    RunnerFleet& fleet;
    const std::string& id;
    ~Done() {
      std::lock_guard<std::mutex> lock(fleet.mu_);
      fleet.moving_.erase(id);
      fleet.moved_cv_.notify_all();
    }
  } done{*this, id};

  const Clock::time_point started = Clock::now();
  // The first chunk pauses it there (if live) and holds its calls.
  AIRLOCK_ASSIGN_OR_RETURN(runtimes::SessionImageChunk chunk, from->client->ExportSession(id, 0));
  const Json spec_json = Json::parse(chunk.spec_json, nullptr, /*allow_exceptions=*/false);
  StatusOr<runtimes::SessionSpec> spec = runtimes::SessionSpecFromJson(spec_json);
  auto stay = [&](const Status& why) {
    (void)from->client->ResumeSession(id);  // it goes on where it is, until that host stops
    return why;
  };
  if (!spec.ok() || spec->id != id) return stay(Internal("the runner host sent no usable spec with the image"));
  const std::string tier = spec->isolation.empty() ? "native" : spec->isolation;
  std::shared_ptr<Host> to;
  {
    std::lock_guard<std::mutex> lock(mu_);
    to = Pick(spec->language, tier);  // never a draining host
  }
  if (!to || to == from) return stay(Unavailable("no other runner host can take a " + spec->language + " (" + tier + ") session"));
  uint64_t offset = 0;
  for (;;) {
    const bool last = offset + chunk.data.size() >= chunk.size;
    if (Status st = to->client->ImportSession(*spec, offset, chunk.data, last); !st.ok()) {
      return stay(Status(st.code(), "runner host " + to->address + " refused it: " + st.message()));
    }
    offset += chunk.data.size();
    if (last) break;
    if (chunk.data.empty()) return stay(Internal("the image ended early"));
    StatusOr<runtimes::SessionImageChunk> next = from->client->ExportSession(id, offset);
    if (!next.ok()) return stay(next.status());
    chunk = std::move(next).value();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(id);
    routes_.erase(id);
    RecordSessionLocked(*spec, to);
    moved_[id] = Moved{from->address, to->address, Clock::now()};
  }
  {
    std::lock_guard<std::mutex> lock(moved_handler_mu_);
    if (moved_handler_) moved_handler_(id, from->address, to->address);
  }
  // The move's end: the old host deletes its image.
  if (Status st = from->client->CloseSession(id); !st.ok()) {
    Log("session " + id + " moved, but draining runner host " + from->address + " did not close it: " + st.message());
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  Log("session " + id + " moved from runner host " + from->address + " to " + to->address + " (" +
      std::to_string(offset >> 10) + " KiB image, " + std::to_string(ms) + " ms)");
  return OkStatus();
}

Json RunnerFleet::Health() {
  std::lock_guard<std::mutex> lock(mu_);
  Json hosts = Json::array();
  size_t in_flight = 0, queued = 0, capacity = 0, restarts = 0;
  bool up = false;
  for (const auto& h : hosts_) {
    const runner::RunnerClient::Load load = h->client->CurrentLoad();
    const bool usable = load.ready && h->healthy && !h->retired && !h->draining;
    up = up || usable;
    in_flight += load.in_flight;
    queued += load.queued;
    if (usable) capacity += load.max_concurrent;
    size_t sessions = 0;
    for (const auto& s : sessions_) sessions += s.second == h ? 1 : 0;
    for (const auto& s : routes_) sessions += s.second.host == h ? 1 : 0;
    Json entry = {{"address", h->address},
                  {"up", usable},
                  {"connected", load.ready},
                  {"healthy", h->healthy},
                  {"retired", h->retired},
                  {"draining", h->draining},
                  {"in_flight", load.in_flight},
                  {"queued", load.queued},
                  {"max_concurrent", load.max_concurrent},
                  {"runs", h->runs},
                  {"sessions", sessions},
                  {"error", h->error}};
    if (auto pool = h->health.find("pool"); pool != h->health.end()) entry["pool"] = *pool;
    if (auto r = h->health.find("restarts"); r != h->health.end() && r->is_number()) restarts += r->get<size_t>();
    hosts.push_back(std::move(entry));
  }
  return {{"up", up},
          {"remote", true},
          {"pid", nullptr},
          {"in_flight", in_flight},
          {"queued", queued},
          {"max_concurrent", capacity},
          {"restarts", restarts},
          {"sessions", sessions_.size() + routes_.size()},
          {"hosts", std::move(hosts)},
          {"error", up ? "" : "no runner host is up"}};
}

}  // namespace airlock::remote
