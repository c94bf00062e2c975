#include "mcp/http_transport.h"

#include <httplib.h>
#include <malloc.h>
#include <signal.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <deque>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "mcp/guarded_http_server.h"
#include "mcp/http_security.h"
#include "mcp/metrics_listener.h"
#include "protocol/json_rpc.h"
#include "mcp/modern.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kStreamHeartbeatMs = 10000;  // GET stream keepalive
constexpr int kListenBacklog = 1024;
// A connection gets a pool thread only once its whole request header has
// arrived (guarded_http_server.h): within this long of connecting, or of
// its next request's first byte; an idle kept-alive connection is closed
// after kKeepAliveIdleS.
constexpr int kHeaderDeadlineS = 10;
constexpr int kKeepAliveIdleS = 5;
// Bodies read before anyone is authenticated (the lobby's body_limit): a
// console sign-in carries its key in a header and needs no body; console
// requests are small JSON; an MCP POST without a credential that could be
// valid gets 401 whatever it carries.
constexpr uint64_t kSignInMaxBody = 4 << 10;
constexpr uint64_t kConsoleMaxBody = 64 << 10;
constexpr uint64_t kUnauthenticatedMaxBody = 64 << 10;
// RFC 9728's well-known path; endpoints' paths are appended ("/mcp").
const std::string kProtectedResourceMetadataPath = "/.well-known/oauth-protected-resource";
// Slow bodies cut (408) are reported on stderr at most this often.
constexpr int kSlowBodyReportS = 60;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// True if a POST names, in MCP-Protocol-Version, a version airlock knows in
// neither era, without the legacy era's Mcp-Session-Id and outside its
// initialize: a client newer than airlock, answered with -32022.
bool NamesUnknownVersion(const httplib::Request& req, const std::string& method) {
  if (!req.has_header("MCP-Protocol-Version") || req.has_header("Mcp-Session-Id") || method == "initialize") {
    return false;
  }
  const std::string version = req.get_header_value("MCP-Protocol-Version");
  return !modern::IsModernVersion(version) && !IsSupportedProtocolVersion(version);
}

// The id of a modern request, for the shape of its transport errors;
// nullopt for a legacy one. Modern: a modern MCP-Protocol-Version header, or
// (a POST without Mcp-Session-Id, not initialize) an unknown version in it
// or a protocol version in the body's _meta. The id is the body's when it
// parses (else null, which modern::TransportError omits).
std::optional<json> ModernRequestId(const httplib::Request& req) {
  const bool modern_header = modern::IsModernVersion(req.get_header_value("MCP-Protocol-Version"));
  if (!modern_header && (req.method != "POST" || req.has_header("Mcp-Session-Id"))) return std::nullopt;
  protocol::jsonrpc::ParseOutcome parsed = req.method == "POST" ? protocol::jsonrpc::Parse(req.body) : protocol::jsonrpc::ParseOutcome{};
  const std::string method = parsed.message ? parsed.message->method : std::string();
  if (modern_header || NamesUnknownVersion(req, method) ||
      (parsed.message && method != "initialize" && modern::LooksModern(*parsed.message))) {
    return parsed.message ? parsed.message->id : json();
  }
  return std::nullopt;
}

// A transport-level rejection: for a legacy request a JSON-RPC error with id
// null and code -32000 (as always); for a modern one modern::TransportError.
void Reject(const httplib::Request& req, httplib::Response& res, int status, const std::string& message,
            bool close = false) {
  res.status = status;
  std::optional<json> modern_id = ModernRequestId(req);
  res.set_content(protocol::jsonrpc::Serialize(modern_id ? modern::TransportError(*modern_id, status, message)
                                               : protocol::jsonrpc::MakeError(nullptr, -32000, message)),
                  "application/json");
  if (close) res.set_header("Connection", "close");
}

std::string SseEvent(const json& message) {
  return "event: message\ndata: " + protocol::jsonrpc::Serialize(message) + "\n\n";
}

}  // namespace

// Replies to one POSTed request, drained by the HTTP thread that answers it.
class HttpTransport::CallChannel : public ReplyChannel {
 public:
  void Notify(const json& n) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    queue_.push_back(n);
    cv_.notify_all();
  }
  void Finish(const json* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (response != nullptr) {
      queue_.push_back(*response);
      response_ = *response;
    }
    finished_ = true;
    cv_.notify_all();
  }
  // Moves pending messages to `out`, waiting up to `timeout` for one;
  // returns true once Finish was called and everything was taken.
  bool Take(std::deque<json>* out, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return finished_ || !queue_.empty(); });
    out->swap(queue_);
    queue_.clear();
    return finished_;
  }
  bool finished() const {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }
  // The response, once finished (null when there is none).
  json response() const {
    std::lock_guard<std::mutex> lock(mu_);
    return response_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<json> queue_;
  bool finished_ = false;
  json response_;
};

// The session's GET stream of server-initiated messages. Every message gets
// an SSE event id (1, 2, ...) and the last kStreamHistory are kept, attached
// or not, so a client that lost its stream reconnects with Last-Event-ID
// and gets what it missed (older ones are gone: it gets what is kept).
class HttpTransport::StreamChannel : public ReplyChannel {
 public:
  static constexpr size_t kStreamHistory = 256;
  using Event = std::pair<uint64_t, json>;  // {event id, message}

  void Notify(const json& n) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    history_.emplace_back(++last_id_, n);
    if (history_.size() > kStreamHistory) history_.pop_front();
    if (!attached_) return;
    queue_.push_back(history_.back());
    cv_.notify_all();
  }
  void Finish(const json*) override {}

  // `last_event_id`: the client's Last-Event-ID (resume after it); none: a
  // fresh stream, from now on.
  bool Attach(std::optional<uint64_t> last_event_id) {
    std::lock_guard<std::mutex> lock(mu_);
    if (attached_ || closed_) return false;
    attached_ = true;
    if (last_event_id) {
      for (const Event& e : history_) {
        if (e.first > *last_event_id) queue_.push_back(e);
      }
    }
    return true;
  }
  void Detach() {
    std::lock_guard<std::mutex> lock(mu_);
    attached_ = false;
    queue_.clear();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  bool attached() const {
    std::lock_guard<std::mutex> lock(mu_);
    return attached_;
  }
  // Like CallChannel::Take; returns true when the stream should end.
  bool Take(std::deque<Event>* out, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return closed_ || !queue_.empty(); });
    out->swap(queue_);
    queue_.clear();
    return closed_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> queue_;
  std::deque<Event> history_;
  uint64_t last_id_ = 0;
  bool attached_ = false;
  bool closed_ = false;
};

struct HttpTransport::Entry {
  std::string id;
  std::string path;             // the endpoint it was created on
  governance::Caller caller;    // who created it
  std::shared_ptr<Session> session;
  std::shared_ptr<StreamChannel> stream;
  std::atomic<int64_t> last_activity_ms{NowMs()};
  std::atomic<int> active{0};  // HTTP requests or streams in progress
};

namespace {

// Counts an HTTP exchange as activity on its session for its lifetime, and
// keeps the session's entry alive that long: a response stream may outlive
// the session (DELETE, idle reaping, Stop) and still touch its counters.
class ActiveGuard {
 public:
  explicit ActiveGuard(std::shared_ptr<HttpTransport::Entry> entry) : entry_(std::move(entry)) { ++entry_->active; }
  ~ActiveGuard() {
    entry_->last_activity_ms = NowMs();
    --entry_->active;
  }

 private:
  const std::shared_ptr<HttpTransport::Entry> entry_;
};

}  // namespace

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot read token file");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  size_t b = token.find_first_not_of(" \t\r\n");
  size_t e = token.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return InvalidArgument(path + ": token file is empty");
  token = token.substr(b, e - b + 1);
  if (token.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidArgument(path + ": token must be one line without spaces");
  }
  return token;
}

StatusOr<HttpOptions> HttpOptionsFromConfig(const config::Config& config) {
  const config::HttpConfig& h = config.server.http;
  HttpOptions o;
  AIRLOCK_RETURN_IF_ERROR(config::ParseListenAddress(h.listen, &o.host, &o.port));
  o.allowed_origins = h.allowed_origins;
  o.allowed_hosts = h.allowed_hosts;
  o.session_idle_timeout_s = h.session_idle_timeout_s;
  o.threads = h.threads;
  o.max_body_bytes = config.server.max_message_bytes;
  o.body_timeout_s = h.body_timeout_s;
  o.body_min_rate = h.body_min_rate;
  o.max_sessions = h.max_sessions;
  o.console_path = h.console_path;
  if (!h.token_file.empty()) {
    AIRLOCK_ASSIGN_OR_RETURN(o.bearer_token, ReadTokenFile(h.token_file));
  }
  if (!h.metrics_token_file.empty()) {
    AIRLOCK_ASSIGN_OR_RETURN(o.metrics_token, ReadTokenFile(h.metrics_token_file));
  }
  if (h.tls.enabled()) {
    AIRLOCK_ASSIGN_OR_RETURN(o.tls, TlsCredentials::Load({.cert_file = h.tls.cert_file,
                                                          .key_file = h.tls.key_file,
                                                          .min_version = h.tls.min_version}));
  }
  return o;
}

HttpTransport::HttpTransport(McpServer& server, HttpOptions options)
    : HttpTransport(std::map<std::string, McpServer*>{{"/mcp", &server}}, std::move(options)) {}

HttpTransport::HttpTransport(std::map<std::string, McpServer*> servers, HttpOptions options)
    : servers_(std::move(servers)),
      options_(std::move(options)),
      http_(std::make_unique<GuardedHttpServer>(options_.threads, LobbyOptions())) {}

ConnectionLobby::Options HttpTransport::LobbyOptions() const {
  ConnectionLobby::Options o;
  o.header_deadline = std::chrono::seconds(kHeaderDeadlineS);
  o.idle_timeout = std::chrono::seconds(kKeepAliveIdleS);
  o.body_deadline = std::chrono::seconds(options_.body_timeout_s);
  o.body_min_rate = options_.body_min_rate;
  o.body_limit = [this](const RequestHead& head) { return BodyLimit(head); };
  return o;
}

HttpTransport::~HttpTransport() { Stop(); }

std::string HttpTransport::url() const {
  std::string host = options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host;
  if (host == "0.0.0.0") host = "127.0.0.1";
  return (options_.tls ? "https://" : "http://") + host + ":" + std::to_string(port_) + (servers_.count("/mcp") || servers_.empty() ? "/mcp" : servers_.begin()->first);
}

std::string HttpTransport::url(const std::string& path) const {
  std::string host = options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host;
  if (host == "0.0.0.0") host = "127.0.0.1";
  return (options_.tls ? "https://" : "http://") + host + ":" + std::to_string(port_) + path;
}

size_t HttpTransport::session_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

Status HttpTransport::Start() {
  ::signal(SIGPIPE, SIG_IGN);  // a vanished client must surface as EPIPE
  Install();
  if (options_.tls) http_->set_tls(options_.tls);
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
    if (port_ <= 0) return Unavailable("cannot bind " + options_.host + " to any port");
  } else {
    if (!http_->bind_to_port(options_.host, options_.port)) {
      return Unavailable("cannot bind " + options_.host + ":" + std::to_string(options_.port) +
                         " (in use, or not a local address?)");
    }
    port_ = options_.port;
  }
  // Debian's libcpp-httplib is built with a listen backlog of 5, which makes
  // bursts of new connections wait for SYN retransmits (1 s). Re-listening
  // on the bound socket raises the backlog (Linux allows it).
  if (listen_fd_ >= 0) ::listen(listen_fd_, kListenBacklog);
  started_ = true;
  listener_ = std::thread([this] { http_->listen_after_bind(); });
  reaper_ = std::thread([this] { ReapIdle(); });
  return OkStatus();
}

void HttpTransport::Stop() {
  if (!started_ || stopping_.exchange(true)) return;
  reaper_cv_.notify_all();
  reaper_.join();
  std::map<std::string, std::shared_ptr<Entry>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions.swap(sessions_);
  }
  for (auto& [id, entry] : sessions) {
    entry->stream->Close();
    entry->session->Close();
  }
  // Idle keep-alive connections wait in the lobby, not on pool threads:
  // they are closed at once and listen() returns without waiting for them.
  http_->Shutdown();
  listener_.join();
}

void HttpTransport::Install() {
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_socket_options([this](int sock) {
    httplib::default_socket_options(sock);  // SO_REUSEADDR
    listen_fd_ = sock;
  });
  // Responses go out in several small writes (SSE events, chunks): without
  // TCP_NODELAY, Nagle's algorithm meets the client's delayed ACK and a
  // call waits ~40 ms for nothing. Accepted sockets inherit it.
  http_->set_tcp_nodelay(true);
  http_->set_read_timeout(30);
  http_->set_write_timeout(30);
  // MCP endpoints answer uncompressed: JSON-RPC replies are small and
  // latency-bound, and gzip on a chunked reply cost a Node.js fetch client
  // (the official SDK's transport) ~5 ms per call, which is a third of a
  // warm run (docs/performance.md). The console and /metrics still compress.
  http_->set_request_filter([this](httplib::Request& req) {
    if (servers_.count(req.path)) req.headers.erase("Accept-Encoding");
  });
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return PreCheck(req, res) ? httplib::Server::HandlerResponse::Unhandled
                              : httplib::Server::HandlerResponse::Handled;
  });
  for (const auto& [path, server] : servers_) {
    http_->Post(path, [this](const httplib::Request& req, httplib::Response& res) { HandlePost(req, res); });
    http_->Get(path, [this](const httplib::Request& req, httplib::Response& res) { HandleGet(req, res); });
    http_->Delete(path, [this](const httplib::Request& req, httplib::Response& res) { HandleDelete(req, res); });
  }
  http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content("ok\n", "text/plain");
  });
  http_->Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ready = !stopping_ && !draining_ && (!options_.ready || options_.ready());
    res.status = ready ? 200 : 503;
    res.set_header("Cache-Control", "no-store");
    res.set_content(ready ? "ready\n" : "not ready\n", "text/plain");
  });
  if (options_.metrics) {
    http_->Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
      ServeMetrics(req, res, options_.metrics, options_.metrics_token);
    });
  }
  if (!options_.oauth_metadata.empty()) {
    auto metadata = [this](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "max-age=300");
      res.set_header("Access-Control-Allow-Origin", "*");  // browser-based MCP clients discover it too
      res.set_content(options_.oauth_metadata, "application/json");
    };
    http_->Get(kProtectedResourceMetadataPath, metadata);
    for (const auto& [path, server] : servers_) http_->Get(kProtectedResourceMetadataPath + path, metadata);
  }
  if (options_.console) {
    auto console = [this](const httplib::Request& req, httplib::Response& res) { options_.console(req, res); };
    // console_path is "/" + [a-z0-9_-]+ (checked by the config): no regex metacharacters.
    const std::string pattern = options_.console_path + "(/.*)?";
    http_->Get(pattern, console);
    http_->Post(pattern, console);
  }
}

namespace {

bool IsConsolePath(const std::string& path, const std::string& prefix) {
  return path == prefix || path.rfind(prefix + "/", 0) == 0;
}

}  // namespace

uint64_t HttpTransport::BodyLimit(const RequestHead& head) const {
  if (options_.console && IsConsolePath(head.path, options_.console_path)) {
    return head.path == options_.console_path + "/api/signin" ? kSignInMaxBody : kConsoleMaxBody;
  }
  if (!servers_.count(head.path)) return kUnauthenticatedMaxBody;  // 404, 405 (/healthz ...)
  if (options_.bearer_token.empty() && !options_.authenticate && !options_.oauth) return options_.max_body_bytes;
  // The static token is checked here; an API key or OAuth token only for its
  // form (neither the key store nor the JWKS is consulted on the lobby's
  // thread): the worker checks it.
  const std::string authorization = head.Header("Authorization").value_or("");
  const bool plausible = (!options_.bearer_token.empty() && BearerMatches(authorization, options_.bearer_token)) ||
                         ((options_.authenticate || options_.oauth) && !BearerToken(authorization).empty());
  return plausible ? options_.max_body_bytes : std::min(options_.max_body_bytes, kUnauthenticatedMaxBody);
}

// Runs once the body is read (the lobby bounds its size and time).
bool HttpTransport::PreCheck(const httplib::Request& req, httplib::Response& res) {
  if (req.path == "/healthz" || req.path == "/readyz" || (req.path == "/metrics" && options_.metrics)) {
    if (req.has_header("Host") &&
        !HostAllowed(req.get_header_value("Host"), IsLoopbackName(options_.host), options_.allowed_hosts)) {
      Reject(req, res, 403, "Forbidden: Host not allowed", true);
      return false;
    }
    if (req.method != "GET") {
      Reject(req, res, 405, "Method Not Allowed: use GET", true);
      return false;
    }
    return true;
  }
  if (!options_.oauth_metadata.empty() && IsConsolePath(req.path, kProtectedResourceMetadataPath)) {
    if (req.method != "GET") {
      Reject(req, res, 405, "Method Not Allowed: use GET", true);
      return false;
    }
    return true;  // public, like the authorization server's own metadata
  }
  if (options_.console && IsConsolePath(req.path, options_.console_path)) {
    // The console authenticates on its own (admin keys, then a cookie);
    // DNS rebinding is refused here as for the MCP endpoints.
    if (req.has_header("Host") &&
        !HostAllowed(req.get_header_value("Host"), IsLoopbackName(options_.host), options_.allowed_hosts)) {
      Reject(req, res, 403, "Forbidden: Host not allowed", true);
      return false;
    }
    return true;
  }
  if (!servers_.count(req.path)) {
    std::string paths;
    for (const auto& [path, server] : servers_) paths += (paths.empty() ? "" : ", ") + path;
    Reject(req, res, 404, "Not Found: the MCP endpoints are " + paths, true);
    return false;
  }
  if (stopping_ || draining_) {
    Reject(req, res, 503, "Server is shutting down", true);
    return false;
  }
  bool loopback = IsLoopbackName(options_.host);
  if (req.has_header("Host") && !HostAllowed(req.get_header_value("Host"), loopback, options_.allowed_hosts)) {
    Reject(req, res, 403, "Forbidden: Host not allowed", true);
    return false;
  }
  if (req.has_header("Origin") && !OriginAllowed(req.get_header_value("Origin"), options_.allowed_origins)) {
    Reject(req, res, 403, "Forbidden: Origin not allowed", true);
    return false;
  }
  AuthOutcome auth = Authenticate(req);
  if (!auth.caller) {
    Reject(req, res, auth.status, auth.message, true);
    res.set_header("WWW-Authenticate", auth.challenge);
    return false;
  }
  return true;
}

AuthOutcome HttpTransport::Authenticate(const httplib::Request& req) const {
  const std::string header = req.get_header_value("Authorization");
  AuthOutcome out;
  if (!options_.bearer_token.empty() && BearerMatches(header, options_.bearer_token)) {
    out.caller = governance::Caller{.user = "token", .role = options_.token_role, .auth = "token"};
    return out;
  }
  const std::string_view given = BearerToken(header);
  if (options_.authenticate && !given.empty()) {
    if ((out.caller = options_.authenticate(given))) return out;
  }
  if (options_.oauth) {
    // A token that is not a static token or API key is judged as an OAuth
    // access token; without any, the challenge names the metadata.
    if (!given.empty()) return options_.oauth(given, req.path);
    if (options_.oauth_challenge) out.challenge = options_.oauth_challenge(req.path);
    return out;
  }
  if (options_.bearer_token.empty() && !options_.authenticate) {
    out.caller = governance::Caller{.user = "anonymous", .role = options_.anonymous_role, .auth = "none"};
  }
  return out;
}

std::optional<governance::Caller> HttpTransport::Identify(const httplib::Request& req) const {
  return Authenticate(req).caller;
}

std::shared_ptr<HttpTransport::Entry> HttpTransport::FindSession(const httplib::Request& req,
                                                                 httplib::Response& res) {
  if (!req.has_header("Mcp-Session-Id")) {
    Reject(req, res, 400, "Bad Request: Mcp-Session-Id header is required");
    return nullptr;
  }
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(req.get_header_value("Mcp-Session-Id"));
    if (it != sessions_.end()) entry = it->second;
  }
  if (!entry || entry->path != req.path) {
    Reject(req, res, 404, "Session not found");
    return nullptr;
  }
  // A session belongs to the identity that created it: another valid key
  // cannot use (or end) it.
  std::optional<governance::Caller> who = Identify(req);
  if (!who || who->user != entry->caller.user || who->key_id != entry->caller.key_id ||
      who->auth != entry->caller.auth) {
    Reject(req, res, 403, "Forbidden: this session belongs to another identity");
    return nullptr;
  }
  if (req.has_header("MCP-Protocol-Version") &&
      !IsSupportedProtocolVersion(req.get_header_value("MCP-Protocol-Version"))) {
    Reject(req, res, 400, "Bad Request: unsupported MCP-Protocol-Version " + req.get_header_value("MCP-Protocol-Version"));
    return nullptr;
  }
  entry->last_activity_ms = NowMs();
  return entry;
}

void HttpTransport::HandlePost(const httplib::Request& req, httplib::Response& res) {
  const std::string accept = req.get_header_value("Accept");
  if (!AcceptsType(accept, "application/json") || !AcceptsType(accept, "text/event-stream")) {
    return Reject(req, res, 406, "Not Acceptable: Accept must list application/json and text/event-stream");
  }
  std::string content_type = req.get_header_value("Content-Type");
  if (content_type.rfind("application/json", 0) != 0) {
    return Reject(req, res, 415, "Unsupported Media Type: Content-Type must be application/json");
  }
  protocol::jsonrpc::ParseOutcome parsed = protocol::jsonrpc::Parse(req.body);
  if (!parsed.message) {
    res.status = 400;
    const bool modern = modern::IsModernVersion(req.get_header_value("MCP-Protocol-Version")) ||
                        NamesUnknownVersion(req, "");
    res.set_content(protocol::jsonrpc::Serialize(modern ? modern::ModernizeError(parsed.error_response)
                                              : parsed.error_response),
                    "application/json");
    return;
  }
  const protocol::jsonrpc::Message& m = *parsed.message;
  if (NamesUnknownVersion(req, m.method) && !modern::LooksModern(m)) {
    const modern::Error error = modern::UnsupportedVersion(req.get_header_value("MCP-Protocol-Version"));
    res.status = error.http_status;
    res.set_content(protocol::jsonrpc::Serialize(modern::MakeError(m.id, error)), "application/json");
    return;
  }
  if (IsModernPost(req, m)) return HandleModernPost(req, m, res);
  if (m.kind == protocol::jsonrpc::Kind::kRequest && m.method == "initialize") return HandleInitialize(req, m, res);

  std::shared_ptr<Entry> entry = FindSession(req, res);
  if (!entry) return;
  auto guard = std::make_shared<ActiveGuard>(entry);
  auto channel = std::make_shared<CallChannel>();
  if (m.kind != protocol::jsonrpc::Kind::kRequest) {
    entry->session->Handle(m, channel);
    res.status = 202;
    return;
  }
  bool stream = false;
  if (m.method == "tools/call") {
    const json& meta = m.params.is_object() ? m.params.value("_meta", json()) : json();
    stream = (meta.is_object() && meta.contains("progressToken")) || entry->session->logging_requested();
  }
  entry->session->Handle(m, channel);
  Respond(entry, m, channel, stream, res);
}

void HttpTransport::Respond(const std::shared_ptr<Entry>& entry, const protocol::jsonrpc::Message& m,
                            const std::shared_ptr<CallChannel>& channel, bool stream, httplib::Response& res) {
  if (!stream && channel->finished()) {
    json response = channel->response();
    if (response.is_null()) {
      res.status = 202;  // cancelled before it started
      return;
    }
    res.set_content(protocol::jsonrpc::Serialize(response), "application/json");
    return;
  }
  auto guard = std::make_shared<ActiveGuard>(entry);
  std::shared_ptr<Session> session = entry->session;
  const json id = m.id;
  const auto heartbeat = std::chrono::milliseconds(options_.heartbeat_ms);
  res.set_header("Cache-Control", "no-cache");
  auto disconnected = [session, id] { session->CancelRequest(id); };
  // A subscriptions/listen stream ends gracefully (its completion response)
  // when the transport stops.
  const bool listen = m.method == "subscriptions/listen";
  const std::atomic<bool>* stopping = &stopping_;
  if (stream) {
    res.set_chunked_content_provider(
        "text/event-stream",
        [channel, guard, disconnected, heartbeat, listen, stopping, session](size_t, httplib::DataSink& sink) {
          if (listen && stopping->load()) session->Close();
          std::deque<json> messages;
          bool finished = channel->Take(&messages, heartbeat);
          for (const json& msg : messages) {
            std::string event = SseEvent(msg);
            if (!sink.write(event.data(), event.size())) {
              disconnected();
              return false;
            }
          }
          if (finished) {
            sink.done();
            return true;
          }
          static constexpr char kPing[] = ": ping\n\n";
          if (messages.empty() && !sink.write(kPing, sizeof kPing - 1)) {
            disconnected();
            return false;
          }
          return true;
        });
    return;
  }
  // Plain JSON for a call still running: leading whitespace keeps the
  // connection probed (and is ignored by JSON parsers) until the response.
  res.set_chunked_content_provider(
      "application/json", [channel, guard, disconnected, heartbeat](size_t, httplib::DataSink& sink) {
        std::deque<json> messages;
        bool finished = channel->Take(&messages, heartbeat);
        if (finished) {
          json response = channel->response();
          if (!response.is_null()) {
            std::string body = protocol::jsonrpc::Serialize(response);
            if (!sink.write(body.data(), body.size())) return false;
          }
          sink.done();
          return true;
        }
        if (!sink.write("\n", 1)) {
          disconnected();
          return false;
        }
        return true;
      });
}

void HttpTransport::HandleInitialize(const httplib::Request& req, const protocol::jsonrpc::Message& m, httplib::Response& res) {
  std::optional<governance::Caller> who = Identify(req);
  if (!who) return Reject(req, res, 401, "Unauthorized: a valid bearer token is required");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sessions_.size() >= options_.max_sessions) {
      return Reject(req, res, 503, "Too many sessions; try again later");
    }
  }
  auto entry = std::make_shared<Entry>();
  entry->path = req.path;
  entry->id = RandomSessionId();  // registered only if initialize succeeds
  entry->caller = *who;           // what every later request must identify as
  entry->stream = std::make_shared<StreamChannel>();
  // Without authentication the MCP session is the caller: anonymous clients
  // own their code sessions and count against per-caller limits apart.
  governance::Caller session_caller = *who;
  if (who->auth == "none") session_caller.user = AnonymousUser(entry->id);
  entry->session = servers_.at(req.path)->NewSession(entry->stream, session_caller);
  auto channel = std::make_shared<CallChannel>();
  entry->session->Handle(m, channel);
  json response = channel->response();
  if (response.contains("result")) {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[entry->id] = entry;
    res.set_header("Mcp-Session-Id", entry->id);
  }
  res.set_content(protocol::jsonrpc::Serialize(response), "application/json");
}

bool HttpTransport::IsModernPost(const httplib::Request& req, const protocol::jsonrpc::Message& m) {
  if (modern::IsModernVersion(req.get_header_value("MCP-Protocol-Version"))) return true;
  return !req.has_header("Mcp-Session-Id") && m.method != "initialize" && modern::LooksModern(m);
}

void HttpTransport::HandleModernPost(const httplib::Request& req, const protocol::jsonrpc::Message& m, httplib::Response& res) {
  auto fail = [&](const modern::Error& error) {
    res.status = error.http_status;
    res.set_content(protocol::jsonrpc::Serialize(modern::MakeError(m.id, error)), "application/json");
  };
  if (req.has_header("Mcp-Session-Id")) {
    return fail({.code = protocol::jsonrpc::kInvalidRequest,
                 .message = std::string("Mcp-Session-Id belongs to the legacy protocol; a ") +
                            modern::kLatestModernVersion +
                            " request carries no session (drop the header, or send MCP-Protocol-Version of the "
                            "session's legacy version)"});
  }
  auto header = [&req](const std::string& name) -> std::optional<std::string> {
    if (!req.has_header(name)) return std::nullopt;
    return req.get_header_value(name);
  };
  if (std::optional<modern::Error> error = modern::CheckHttpHeaders(header, m)) return fail(*error);
  std::variant<modern::RequestMeta, modern::Error> meta = modern::ReadRequestMeta(m.params);
  if (m.kind == protocol::jsonrpc::Kind::kNotification) {
    res.status = 202;  // no client notifications in this era over HTTP (closing a stream cancels)
    return;
  }
  if (auto* error = std::get_if<modern::Error>(&meta)) return fail(*error);
  std::optional<governance::Caller> who = Identify(req);
  if (!who) return Reject(req, res, 401, "Unauthorized: a valid bearer token is required");
  // The caller is its credential; an anonymous caller is a new identity per
  // request (it has no MCP session to be).
  const bool anonymous = who->auth == "none";
  if (anonymous) who->user = AnonymousUser(RandomSessionId());
  std::shared_ptr<Session> session = servers_.at(req.path)->NewSession(nullptr, *who);
  session->UseModernEra(anonymous);
  auto entry = std::make_shared<Entry>();  // not registered: lives for this request
  entry->path = req.path;
  entry->caller = *who;
  entry->session = session;
  const modern::RequestMeta& rm = std::get<modern::RequestMeta>(meta);
  // subscriptions/listen: an SSE stream (acknowledgment, notifications,
  // keep-alives) until the client leaves; refused ones are plain JSON.
  const bool listen = m.method == "subscriptions/listen";
  bool stream = listen || (m.method == "tools/call" && (!rm.progress_token.is_null() || rm.log_level.has_value()));
  auto channel = std::make_shared<CallChannel>();
  session->Handle(m, channel);
  if (listen && channel->finished()) stream = false;
  if (!stream && channel->finished()) {
    json response = channel->response();
    if (response.contains("error")) {
      const int code = response["error"].value("code", 0);
      if (code == protocol::jsonrpc::kMethodNotFound) res.status = 404;
      if (code <= modern::kHeaderMismatch && code >= modern::kUnsupportedProtocolVersion) res.status = 400;
      if (listen && code == protocol::jsonrpc::kInvalidRequest && response["error"].contains("data")) res.status = 429;
    }
  }
  Respond(entry, m, channel, stream, res);
}

void HttpTransport::HandleGet(const httplib::Request& req, httplib::Response& res) {
  if (modern::IsModernVersion(req.get_header_value("MCP-Protocol-Version"))) {
    res.set_header("Allow", "POST");
    return Reject(req, res, 405, std::string("Method Not Allowed: protocol ") + modern::kLatestModernVersion +
                                " has no GET stream (use subscriptions/listen)");
  }
  if (!AcceptsType(req.get_header_value("Accept"), "text/event-stream")) {
    return Reject(req, res, 406, "Not Acceptable: Accept must list text/event-stream");
  }
  std::shared_ptr<Entry> entry = FindSession(req, res);
  if (!entry) return;
  // Last-Event-ID: resume a lost stream after that event (decimal, as sent).
  std::optional<uint64_t> last_event_id;
  if (req.has_header("Last-Event-ID")) {
    const std::string v = req.get_header_value("Last-Event-ID");
    uint64_t id = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty()) {
      return Reject(req, res, 400, "Bad Request: Last-Event-ID must be an event id this server sent");
    }
    last_event_id = id;
  }
  if (!entry->stream->Attach(last_event_id)) {
    return Reject(req, res, 409, "Conflict: this session already has a GET stream");
  }
  auto guard = std::make_shared<ActiveGuard>(entry);
  std::shared_ptr<StreamChannel> channel = entry->stream;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [channel, guard](size_t, httplib::DataSink& sink) {
        std::deque<StreamChannel::Event> messages;
        bool closed = channel->Take(&messages, std::chrono::milliseconds(kStreamHeartbeatMs));
        for (const auto& [id, msg] : messages) {
          std::string event = "id: " + std::to_string(id) + "\n" + SseEvent(msg);
          if (!sink.write(event.data(), event.size())) return false;
        }
        if (closed) {
          sink.done();
          return true;
        }
        static constexpr char kPing[] = ": ping\n\n";
        return !messages.empty() || sink.write(kPing, sizeof kPing - 1);
      },
      [channel](bool) { channel->Detach(); });
}

void HttpTransport::HandleDelete(const httplib::Request& req, httplib::Response& res) {
  if (modern::IsModernVersion(req.get_header_value("MCP-Protocol-Version"))) {
    res.set_header("Allow", "POST");
    return Reject(req, res, 405, std::string("Method Not Allowed: protocol ") + modern::kLatestModernVersion +
                                " has no sessions to delete");
  }
  std::shared_ptr<Entry> entry = FindSession(req, res);
  if (!entry) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(entry->id);
  }
  EndSession(entry);
  res.status = 200;
}

void HttpTransport::EndSession(const std::shared_ptr<Entry>& entry) {
  entry->stream->Close();
  entry->session->Close();
}

void HttpTransport::ReapIdle() {
  const int64_t idle_ms = static_cast<int64_t>(options_.session_idle_timeout_s) * 1000;
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t ticks = 0, reported_slow = 0, reported_refused = 0;
  while (!stopping_) {
    reaper_cv_.wait_for(lock, std::chrono::seconds(1));
    std::vector<std::shared_ptr<Entry>> expired;
    const int64_t now = NowMs();
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      Entry& e = *it->second;
      if (e.active == 0 && e.session->in_flight() == 0 && !e.stream->attached() &&
          now - e.last_activity_ms > idle_ms) {
        expired.push_back(it->second);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    for (const auto& e : expired) EndSession(e);
    // Large replies (a run's 1 MiB of output, serialized and copied) are
    // freed into whichever thread's malloc arena made them, where glibc
    // keeps them: give free pages back now and then, so the resident size
    // follows what is in use (the soak's RSS bound) rather than each
    // thread's high-water mark.
    if (++ticks % 10 == 0) malloc_trim(0);
    if (ticks % kSlowBodyReportS == 0) {
      const uint64_t slow = http_->lobby().slow_bodies(), refused = http_->lobby().refused();
      if (slow != reported_slow || refused != reported_refused) {
        std::cerr << "airlock: http: " << slow - reported_slow << " request(s) cut for a slow body (408), "
                  << refused - reported_refused << " refused before a worker (400/411/413/431) in the last "
                  << kSlowBodyReportS << " s\n";
        reported_slow = slow;
        reported_refused = refused;
      }
    }
    lock.lock();
  }
}

}  // namespace airlock::mcp
