// MeteredExecutor (metrics/metered_executor.h): the program phase counts
// every program that ran, also one faster than the result's millisecond
// resolution, and never a run that did not start.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "metrics/metered_executor.h"
#include "metrics/metrics.h"

namespace airlock::metrics {
namespace {

// Answers at once: a program that ran in under a millisecond (wall_ms 0),
// or, with `refuse`, a run that never started.
class InstantExecutor : public runtimes::CodeExecutor {
 public:
  bool refuse = false;
  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress, CancelToken&,
                          runtimes::BridgeHandler*) override {
    if (refuse) return runtimes::InternalErrorResult(request.language, "busy", "no slot");
    if (progress) progress(runtimes::RunPhase::kStarting);
    if (progress) progress(runtimes::RunPhase::kRunning);
    runtimes::RunResult r;
    r.language = request.language;
    r.status = runtimes::RunStatus::kOk;
    r.exit_code = 0;
    r.wall_ms = 0;
    return r;
  }
  std::vector<runtimes::LanguageInfo> Languages() override { return {}; }
};

TEST(MeteredExecutorTest, AProgramFasterThanAMillisecondIsTimedAndARefusedRunIsNot) {
  Registry registry;
  InstantExecutor inner;
  MeteredExecutor metered(inner, registry);
  runtimes::RunRequest request;
  request.language = "python";
  CancelToken cancel;
  metered.Run(request, nullptr, cancel);
  metered.Run(request, nullptr, cancel);
  inner.refuse = true;
  metered.Run(request, nullptr, cancel);
  const std::string text = registry.Render();
  EXPECT_NE(text.find("airlock_run_seconds_count{phase=\"program\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("airlock_run_seconds_count{phase=\"total\"} 3\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace airlock::metrics
