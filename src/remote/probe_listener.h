// The runner host's plain-HTTP probe port (`airlock runner-host --probe`):
// GET /healthz (the process answers) and GET /readyz (it takes runs). The
// gRPC port needs a client certificate, which kubelet's probes do not have;
// this port serves nothing else, and reveals nothing but "ok".
//
//   ProbeListener probe([&] { return ready.load(); });
//   AIRLOCK_RETURN_IF_ERROR(probe.Start("0.0.0.0", 7701));
#ifndef AIRLOCK_REMOTE_PROBE_LISTENER_H_
#define AIRLOCK_REMOTE_PROBE_LISTENER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "mcp/httplib_fwd.h"

namespace airlock::remote {

class ProbeListener {
 public:
  explicit ProbeListener(std::function<bool()> ready);
  ~ProbeListener();  // Stop()
  ProbeListener(const ProbeListener&) = delete;
  ProbeListener& operator=(const ProbeListener&) = delete;

  // Binds and serves on a thread; port 0 picks a free one (port()).
  Status Start(const std::string& host, int port);
  void Stop();
  int port() const { return port_; }

 private:
  std::function<bool()> ready_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_PROBE_LISTENER_H_
