// Test doubles for the MCP tests: a fake CodeExecutor and a recording
// ReplyChannel.
#ifndef AIRLOCK_TESTS_UNIT_MCP_TEST_UTIL_H_
#define AIRLOCK_TESTS_UNIT_MCP_TEST_UTIL_H_

#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "mcp/reply_channel.h"
#include "mcp/server.h"
#include "runtimes/code_executor.h"

namespace airlock::mcp::testing {

using nlohmann::json;

// Returns canned results; optionally blocks until cancelled.
class FakeExecutor : public runtimes::CodeExecutor {
 public:
  using Handler = std::function<runtimes::RunResult(const runtimes::RunRequest&, const runtimes::ProgressFn&,
                                                    CancelToken&)>;

  FakeExecutor() {
    runtimes::LanguageInfo py;
    py.name = "python";
    py.display_name = "Python";
    py.version = "3.11.2";
    py.notes = "numpy, pandas, matplotlib importable";
    py.default_timeout_ms = 10000;
    py.default_memory_mb = 256;
    runtimes::LanguageInfo c;
    c.name = "c";
    c.display_name = "C";
    c.version = "gcc 12.2";
    c.compiled = true;
    languages = {py, c};
  }

  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                          CancelToken& cancel, runtimes::BridgeHandler* bridge = nullptr) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      requests.push_back(request);
      ++running;
      max_running = std::max(max_running, running);
    }
    cv.notify_all();
    runtimes::RunResult r = handler ? handler(request, progress, cancel) : Ok(request, "hello\n");
    {
      std::lock_guard<std::mutex> lock(mu);
      --running;
      if (cancel.cancelled()) ++cancelled_runs;
    }
    cv.notify_all();
    return r;
  }

  std::vector<runtimes::LanguageInfo> Languages() override { return languages; }

  static runtimes::RunResult Ok(const runtimes::RunRequest& request, const std::string& out) {
    runtimes::RunResult r;
    r.status = runtimes::RunStatus::kOk;
    r.language = request.language;
    r.exit_code = 0;
    r.stdout_text = out;
    r.wall_ms = 12;
    r.cpu_ms = 10;
    return r;
  }

  // A handler that reports queued and running, then waits (up to 20 s) for
  // the cancel token's eventfd.
  static runtimes::RunResult BlockUntilCancelled(const runtimes::RunRequest& request,
                                                 const runtimes::ProgressFn& progress, CancelToken& cancel) {
    if (progress) progress(runtimes::RunPhase::kQueued);
    if (progress) progress(runtimes::RunPhase::kRunning);
    pollfd p{cancel.fd(), POLLIN, 0};
    ::poll(&p, 1, 20000);
    runtimes::RunResult r;
    r.status = runtimes::RunStatus::kInternalError;
    r.error_code = "cancelled";
    r.language = request.language;
    r.message = "cancelled";
    return r;
  }

  bool WaitRunning(int n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, [&] { return running >= n; });
  }
  bool WaitCancelled(int n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, [&] { return cancelled_runs >= n; });
  }

  std::vector<runtimes::LanguageInfo> languages;
  Handler handler;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<runtimes::RunRequest> requests;
  int running = 0;
  int max_running = 0;
  int cancelled_runs = 0;
};

// Records everything sent on it.
class RecordingChannel : public ReplyChannel {
 public:
  void Notify(const json& n) override {
    std::lock_guard<std::mutex> lock(mu_);
    notifications_.push_back(n);
    all_.push_back(n);
  }
  void Finish(const json* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++finish_calls_;
    if (response) {
      response_ = *response;
      all_.push_back(*response);
    }
    cv_.notify_all();
  }
  // Waits for Finish; returns the response (null when none).
  json Wait(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return finish_calls_ > 0; });
    return response_;
  }
  bool finished() {
    std::lock_guard<std::mutex> lock(mu_);
    return finish_calls_ > 0;
  }
  int finish_calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return finish_calls_;
  }
  std::vector<json> notifications() {
    std::lock_guard<std::mutex> lock(mu_);
    return notifications_;
  }
  std::vector<json> all() {
    std::lock_guard<std::mutex> lock(mu_);
    return all_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<json> notifications_;
  std::vector<json> all_;
  json response_;
  int finish_calls_ = 0;
};

inline json Request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

inline json InitializeRequest(int id, const std::string& version = "2025-11-25") {
  return Request(id, "initialize",
                 {{"protocolVersion", version},
                  {"capabilities", json::object()},
                  {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
}

inline json RunCode(int id, json arguments, json meta = nullptr) {
  json params = {{"name", "run_code"}, {"arguments", std::move(arguments)}};
  if (!meta.is_null()) params["_meta"] = std::move(meta);
  return Request(id, "tools/call", std::move(params));
}

// An initialized session of `caller` on `server` with one run_code call sent
// (its answer goes to the returned channel). The caller keeps the session
// alive and closes it.
inline std::pair<std::shared_ptr<Session>, std::shared_ptr<RecordingChannel>> StartRunCode(
    McpServer& server, const governance::Caller& caller, json arguments) {
  auto session = server.NewSession(std::make_shared<RecordingChannel>(), caller);
  auto init = std::make_shared<RecordingChannel>();
  session->HandleText(InitializeRequest(1).dump(), init);
  init->Wait();
  session->HandleText(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump(),
                      std::make_shared<RecordingChannel>());
  auto call = std::make_shared<RecordingChannel>();
  session->HandleText(RunCode(2, std::move(arguments)).dump(), call);
  return {session, call};
}

}  // namespace airlock::mcp::testing

#endif  // AIRLOCK_TESTS_UNIT_MCP_TEST_UTIL_H_
