// `airlock serve --metrics HOST:PORT`: /metrics on a listener of its own
// (for a scraper on another interface, or a stdio server), with the rule of
// the main listener's /metrics: loopback peers, or the metrics token. A
// connection holds one of its two threads only once its whole request has
// arrived (guarded_http_server.h), so slow clients cannot freeze it.
//
//   MetricsListener m([&] { return registry.Render(); }, token);
//   AIRLOCK_RETURN_IF_ERROR(m.Start("0.0.0.0", 9464));
//   ...
//   m.Stop();   // also in the destructor
#ifndef AIRLOCK_MCP_METRICS_LISTENER_H_
#define AIRLOCK_MCP_METRICS_LISTENER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "mcp/httplib_fwd.h"


namespace airlock::mcp {

class GuardedHttpServer;

// Answers one GET /metrics: 403 unless MetricsRequestAllowed, else the text
// `render` gives, as text/plain; version=0.0.4. Shared by both listeners.
void ServeMetrics(const httplib::Request& req, httplib::Response& res, const std::function<std::string()>& render,
                  const std::string& token);

class MetricsListener {
 public:
  MetricsListener(std::function<std::string()> render, std::string token);
  ~MetricsListener();
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  // Binds and serves on a thread; port 0 picks a free one (port()).
  Status Start(const std::string& host, int port);
  void Stop();
  int port() const { return port_; }

 private:
  const std::function<std::string()> render_;
  const std::string token_;
  std::unique_ptr<GuardedHttpServer> http_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_METRICS_LISTENER_H_
