// A CodeExecutor that counts and times every run it forwards (the MCP
// process wraps its RunnerClient in one): `airlock_runs_total{language,
// tier, mode, status}` and `airlock_run_seconds{phase}` histograms of
//   queue   — from the request until the runner took it (progress "starting"),
//   start   — from then until the program ran ("running"; jail and interpreter),
//   program — the program's own wall time (RunResult.wall_ms),
//   total   — from the request until the result.
// It changes nothing about the runs themselves.
//
//   metrics::MeteredExecutor metered(client, registry);
//   McpServer server(config, metered, ...);
#ifndef AIRLOCK_METRICS_METERED_EXECUTOR_H_
#define AIRLOCK_METRICS_METERED_EXECUTOR_H_

#include <utility>

#include "metrics/metrics.h"
#include "runtimes/code_executor.h"

namespace airlock::metrics {

class MeteredExecutor : public runtimes::CodeExecutor {
 public:
  // `inner` and `registry` must outlive this.
  MeteredExecutor(runtimes::CodeExecutor& inner, Registry& registry);

  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                          CancelToken& cancel, runtimes::BridgeHandler* bridge = nullptr) override;
  std::vector<runtimes::LanguageInfo> Languages() override { return inner_.Languages(); }
  Status OpenSession(const runtimes::SessionSpec& spec) override;
  Status CloseSession(const std::string& id) override { return inner_.CloseSession(id); }
  Status PauseSession(const std::string& id) override { return inner_.PauseSession(id); }
  Status ResumeSession(const std::string& id) override { return inner_.ResumeSession(id); }
  Status ForkSession(const std::string& id, const runtimes::SessionSpec& copy) override {
    return inner_.ForkSession(id, copy);
  }
  StatusOr<runtimes::SessionImageChunk> ExportSession(const std::string& id, uint64_t offset) override {
    return inner_.ExportSession(id, offset);
  }
  Status ImportSession(const runtimes::SessionSpec& spec, uint64_t offset, const std::string& data,
                       bool last) override {
    return inner_.ImportSession(spec, offset, data, last);
  }
  void SetSessionMovedHandler(SessionMovedFn handler) override { inner_.SetSessionMovedHandler(std::move(handler)); }
  std::string SessionHost(const std::string& id) override { return inner_.SessionHost(id); }
  Status AdoptSession(const std::string& id, const std::string& host) override {
    return inner_.AdoptSession(id, host);
  }
  nlohmann::json Health() override { return inner_.Health(); }

 private:
  runtimes::CodeExecutor& inner_;
  Family& runs_;
  Family& seconds_;
  Family& sessions_opened_;
};

}  // namespace airlock::metrics

#endif  // AIRLOCK_METRICS_METERED_EXECUTOR_H_
