#include "remote/probe_listener.h"

#include <httplib.h>

namespace airlock::remote {

ProbeListener::ProbeListener(std::function<bool()> ready) : ready_(std::move(ready)) {}

ProbeListener::~ProbeListener() { Stop(); }

Status ProbeListener::Start(const std::string& host, int port) {
  http_ = std::make_unique<httplib::Server>();
  http_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  http_->set_read_timeout(5);
  http_->set_write_timeout(5);
  http_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content("ok\n", "text/plain");
  });
  http_->Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    const bool ready = ready_();
    res.status = ready ? 200 : 503;
    res.set_header("Cache-Control", "no-store");
    res.set_content(ready ? "ready\n" : "not ready\n", "text/plain");
  });
  port_ = port == 0 ? http_->bind_to_any_port(host) : (http_->bind_to_port(host, port) ? port : -1);
  if (port_ <= 0) {
    http_.reset();
    return Unavailable("cannot listen for probes on " + host + ":" + std::to_string(port));
  }
  thread_ = std::thread([this] { http_->listen_after_bind(); });
  return OkStatus();
}

void ProbeListener::Stop() {
  if (!http_) return;
  http_->stop();
  if (thread_.joinable()) thread_.join();
  http_.reset();
}

}  // namespace airlock::remote
