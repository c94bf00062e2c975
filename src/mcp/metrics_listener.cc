#include "mcp/metrics_listener.h"

#include <httplib.h>

#include "mcp/guarded_http_server.h"
#include "mcp/http_security.h"

namespace airlock::mcp {

void ServeMetrics(const httplib::Request& req, httplib::Response& res, const std::function<std::string()>& render,
                  const std::string& token) {
  res.set_header("Cache-Control", "no-store");
  if (!MetricsRequestAllowed(req.remote_addr, req.get_header_value("Authorization"), token)) {
    res.status = 403;
    res.set_content("metrics are served to loopback clients or with the metrics token\n", "text/plain");
    return;
  }
  res.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
}

MetricsListener::MetricsListener(std::function<std::string()> render, std::string token)
    : render_(std::move(render)), token_(std::move(token)) {}

MetricsListener::~MetricsListener() { Stop(); }

Status MetricsListener::Start(const std::string& host, int port) {
  // Connections wait for their whole request in a lobby, not on one of the
  // two threads (a slow client cannot hold them); GET /metrics has no body,
  // so any body is refused unread (413).
  ConnectionLobby::Options lobby;
  lobby.body_limit = [](const RequestHead&) -> uint64_t { return 0; };
  http_ = std::make_unique<GuardedHttpServer>(2, std::move(lobby));
  http_->set_read_timeout(10);
  http_->set_write_timeout(10);
  http_->Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    ServeMetrics(req, res, render_, token_);
  });
  port_ = port == 0 ? http_->bind_to_any_port(host) : (http_->bind_to_port(host, port) ? port : -1);
  if (port_ <= 0) {
    http_.reset();
    return Unavailable("cannot listen for metrics on " + host + ":" + std::to_string(port));
  }
  thread_ = std::thread([this] { http_->listen_after_bind(); });
  return OkStatus();
}

void MetricsListener::Stop() {
  if (!http_) return;
  http_->Shutdown();
  if (thread_.joinable()) thread_.join();
  http_.reset();
}

}  // namespace airlock::mcp
