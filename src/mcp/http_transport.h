// MCP Streamable HTTP transport (cpp-httplib; see docs/http.md).
//
// One or more endpoints (paths; /mcp by default), each served by its own
// McpServer (governance/policy.h endpoints). On each:
//  * POST a JSON-RPC message. Notifications and responses → 202, no body.
//    Requests → application/json, except tools/call with a progressToken
//    (or after logging/setLevel), which gets an SSE stream: progress and
//    log notifications, then the response. initialize creates a session
//    and returns its Mcp-Session-Id (128 random bits, hex).
//  * GET (Accept: text/event-stream) → the session's stream of
//    server-initiated messages (tools/list_changed, broadcast logs); one
//    per session (a second gets 409).
//  * DELETE → ends the session, cancelling its runs → 200.
// Checks, in order: unknown path → 404; Host and Origin (DNS rebinding) →
// 403; bearer token or API key (when configured) → 401 with
// WWW-Authenticate; a session used with another identity than the one that
// created it (or on another endpoint) → 403 / 404; body larger than
// max_body_bytes → 413 (discarded, not buffered); Accept → 406;
// Content-Type → 415; missing Mcp-Session-Id → 400, unknown/ended → 404;
// unsupported MCP-Protocol-Version → 400. These refusals carry a JSON-RPC
// error with id null and -32000 for legacy requests; for modern ones (see
// docs/mcp.md) modern::TransportError (no null id, -32600/-32603), and an
// unknown version without a session is -32022.
//
// A client that disconnects while its tools/call runs has the run
// cancelled: the response stream (SSE, or chunked JSON padded with
// whitespace, which JSON parsers ignore) is written every heartbeat_ms while
// waiting, and a failed write cancels the call. Sessions idle longer than
// session_idle_timeout_s (no request, no run, no GET stream) are ended.
//
// Connections (guarded_http_server.h) hold a worker thread only while one
// of their requests is read and answered: until a request's whole header
// has arrived (10 s at most) and between keep-alive requests (5 s idle at
// most) they wait in one epoll thread, so slow or idle clients cannot take
// the `threads` workers away from others.
#ifndef AIRLOCK_MCP_HTTP_TRANSPORT_H_
#define AIRLOCK_MCP_HTTP_TRANSPORT_H_

#include <atomic>
#include <condition_variable>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "governance/policy.h"
#include "mcp/server.h"
#include "mcp/connection_lobby.h"
#include "mcp/httplib_fwd.h"
#include "mcp/tls_context.h"


namespace airlock::mcp {

class GuardedHttpServer;  // guarded_http_server.h

// The authentication of one request: a Caller, or the refusal (401 or 403,
// its WWW-Authenticate challenge and a message). Both MCP protocol eras
// call HttpTransport::Authenticate, the one place credentials are checked.
struct AuthOutcome {
  std::optional<governance::Caller> caller;
  int status = 401;
  std::string challenge = "Bearer realm=\"airlock\"";
  std::string message = "Unauthorized: a valid bearer token is required";
};

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8787;  // 0: any free port (see HttpTransport::port())
  std::vector<std::string> allowed_origins;
  std::vector<std::string> allowed_hosts;
  std::string bearer_token;  // empty: no authentication
  // Per-person API keys: the identity (user, role, key id) of a request's
  // bearer token, or nullopt (auth::KeyStore::Authenticate in `airlock
  // serve`). When both this and bearer_token are set, either one admits.
  // Called on every request, so a revoked key stops working at once.
  std::function<std::optional<governance::Caller>(std::string_view token)> authenticate;
  // Roles of callers without an API key (config "access"): the static
  // bearer token's holder (user "token"), and everyone when no
  // authentication is configured (user "anonymous").
  std::string token_role = "reader";
  std::string anonymous_role = "reader";
  uint64_t session_idle_timeout_s = 3600;
  int threads = 32;
  uint64_t max_body_bytes = 4u << 20;
  // A request reaches a worker thread only once its whole body has arrived
  // (connection_lobby.h): within body_timeout_s of its header, at
  // body_min_rate bytes/s or more (0: no minimum); else 408. Before
  // authentication bodies are small: console sign-in kSignInMaxBody, an MCP
  // POST without a plausible credential kUnauthenticatedMaxBody (413).
  uint64_t body_timeout_s = 30;
  uint64_t body_min_rate = 1024;
  uint64_t max_sessions = 1024;
  int heartbeat_ms = 1000;  // write interval while a call runs
  // Serves every request under console_path (the operators' console,
  // console/console_http.h) after the Host check; unset: it is 404.
  std::function<void(const httplib::Request&, httplib::Response&)> console;
  std::string console_path = "/console";  // "/" + [a-z0-9_-]+ (config server.http.console.path)
  // Operations (docs/deploy.md), unauthenticated and telling nothing else:
  // GET /healthz is 200 while the process serves; GET /readyz is 200 when
  // `ready` says so (runner up, audit writable, pool warmed), else 503.
  std::function<bool()> ready;
  // GET /metrics: the Prometheus text `metrics` renders; only to loopback
  // clients, or to anyone with `Authorization: Bearer <metrics_token>` when
  // one is set. Unset: /metrics is 404.
  std::function<std::string()> metrics;
  std::string metrics_token;
  // OAuth 2.1 access tokens (auth/oauth, config server.http.oauth): decides
  // a bearer token that neither the static token nor an API key admitted,
  // for the endpoint `path`. With it, oauth_metadata (RFC 9728 Protected
  // Resource Metadata, JSON) is served at /.well-known/oauth-protected-resource
  // and its path-suffixed form for each endpoint, and a request without
  // any credential gets oauth_challenge(path) in its 401.
  std::function<AuthOutcome(std::string_view token, const std::string& path)> oauth;
  std::string oauth_metadata;
  std::function<std::string(const std::string& path)> oauth_challenge;
  // HTTPS (config server.http.tls): every connection speaks TLS with the
  // credentials' current certificate; Reload() on them (SIGHUP) counts from
  // the next connection. Null: plain HTTP.
  std::shared_ptr<TlsCredentials> tls;
};

// Options from config.server (listen, http.*, max_message_bytes); reads the
// token file, and the TLS certificate and key, when configured (`--token-file` overrides
// config.server.http.token_file before this call).
StatusOr<HttpOptions> HttpOptionsFromConfig(const config::Config& config);

// The token in `path`, surrounding whitespace removed; empty is an error.
StatusOr<std::string> ReadTokenFile(const std::string& path);

class HttpTransport {
 public:
  // One endpoint, /mcp.
  HttpTransport(McpServer& server, HttpOptions options);
  // Several: path ("/mcp", "/team") -> its server (each must outlive this).
  HttpTransport(std::map<std::string, McpServer*> servers, HttpOptions options);
  ~HttpTransport();  // Stop()
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds and starts serving on background threads.
  Status Start();
  // Stops accepting, ends every session (cancelling runs), joins threads.
  // Idempotent; safe from any thread except an HTTP handler.
  void Stop();
  // The first step of a graceful stop: from now on every new MCP request
  // gets 503 "shutting down" and /readyz 503, while the calls in flight go
  // on (their streams stay open) until Stop().
  void Drain() { draining_ = true; }

  int port() const { return port_; }
  // The caller of `req` (static token, API key, OAuth token, or anonymous
  // when nothing is configured) or why it is refused.
  AuthOutcome Authenticate(const httplib::Request& req) const;
  std::string url() const;  // http(s)://HOST:PORT/mcp (or the first endpoint's path)
  std::string url(const std::string& path) const;
  size_t session_count() const;

  struct Entry;  // one session's state (opaque: http_transport.cc)

 private:
  class CallChannel;
  class StreamChannel;

  void Install();
  bool PreCheck(const httplib::Request& req, httplib::Response& res);
  void HandlePost(const httplib::Request& req, httplib::Response& res);
  void HandleGet(const httplib::Request& req, httplib::Response& res);
  void HandleDelete(const httplib::Request& req, httplib::Response& res);
  void HandleInitialize(const httplib::Request& req, const protocol::jsonrpc::Message& m, httplib::Response& res);
  // True if a POST speaks the modern era (2026-07-28): a modern
  // MCP-Protocol-Version header, or modern _meta without Mcp-Session-Id.
  static bool IsModernPost(const httplib::Request& req, const protocol::jsonrpc::Message& m);
  // One modern request: headers checked against the body, the caller's
  // identity per request, a session that lives only for this request.
  void HandleModernPost(const httplib::Request& req, const protocol::jsonrpc::Message& m, httplib::Response& res);
  // Who sent the request (nullopt: not authenticated).
  std::optional<governance::Caller> Identify(const httplib::Request& req) const;
  // The largest body the lobby reads for a request with this head, before
  // any worker (or key store) sees it.
  uint64_t BodyLimit(const RequestHead& head) const;
  ConnectionLobby::Options LobbyOptions() const;
  std::shared_ptr<Entry> FindSession(const httplib::Request& req, httplib::Response& res);
  void Respond(const std::shared_ptr<Entry>& entry, const protocol::jsonrpc::Message& m,
               const std::shared_ptr<CallChannel>& channel, bool stream, httplib::Response& res);
  void EndSession(const std::shared_ptr<Entry>& entry);
  void ReapIdle();

  const std::map<std::string, McpServer*> servers_;
  const HttpOptions options_;
  std::unique_ptr<GuardedHttpServer> http_;
  std::thread listener_;
  std::thread reaper_;
  int port_ = 0;
  int listen_fd_ = -1;  // owned by httplib
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};
  bool started_ = false;

  mutable std::mutex mu_;
  std::condition_variable reaper_cv_;
  std::map<std::string, std::shared_ptr<Entry>> sessions_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_HTTP_TRANSPORT_H_
