#include "mcp/run_tracker.h"

#include <algorithm>
#include <set>

#include "audit/audit_log.h"

namespace airlock::mcp {

nlohmann::json ToJson(const RunInFlight& r) {
  return {{"run_id", r.run_id}, {"user", r.user},     {"role", r.role},
          {"endpoint", r.endpoint}, {"client", r.client}, {"tool", r.tool},
          {"started_ms", r.started_ms}, {"cancel_requested", r.cancel_requested}};
}

CallOutcome OutcomeOfToolResult(const nlohmann::json& result) {
  static const std::set<std::string> kRunStatuses = {"ok",           "exit_nonzero", "timeout",      "memory_limit",
                                                     "output_limit", "compile_error", "killed_signal"};
  const bool is_error = result.is_object() && result.value("isError", false);
  const nlohmann::json* sc = result.is_object() && result.contains("structuredContent") ? &result["structuredContent"]
                                                                                        : nullptr;
  if (sc != nullptr && !sc->is_object()) sc = nullptr;
  std::string code;
  if (sc != nullptr) {
    if (sc->contains("error_code") && (*sc)["error_code"].is_string()) {
      code = (*sc)["error_code"].get<std::string>();
    } else if (sc->contains("error") && (*sc)["error"].is_object() && (*sc)["error"].contains("code") &&
               (*sc)["error"]["code"].is_string()) {
      code = (*sc)["error"]["code"].get<std::string>();
    }
    if (sc->contains("status") && (*sc)["status"].is_string()) {
      const std::string status = (*sc)["status"].get<std::string>();
      if (kRunStatuses.count(status)) return {.status = status};
      if (status == "internal_error") return {.status = "error", .error_code = code.empty() ? status : code};
    }
  }
  if (!is_error) return {.status = "ok"};
  return {.status = "error", .error_code = code.empty() ? "tool_error" : code};
}

RunTracker::Handle& RunTracker::Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    End();
    tracker_ = other.tracker_;
    run_id_ = std::move(other.run_id_);
    outcome_ = std::move(other.outcome_);
    other.tracker_ = nullptr;
  }
  return *this;
}

void RunTracker::Handle::End() {
  if (tracker_ != nullptr) tracker_->End(run_id_, outcome_);
  tracker_ = nullptr;
}

RunTracker::Handle RunTracker::Begin(const std::string& run_id, const governance::Caller& who,
                                     const std::string& tool, CancelToken* cancel) {
  Entry e;
  e.info = {.run_id = run_id, .user = who.user, .role = who.role, .endpoint = who.endpoint, .client = who.client,
            .tool = tool, .started_ms = audit::NowMs(), .cancel_requested = false};
  e.cancel = cancel;
  std::lock_guard<std::mutex> lock(mu_);
  runs_[run_id] = std::move(e);
  return Handle(this, run_id);
}

void RunTracker::End(const std::string& run_id, const CallOutcome& outcome) {
  RunInFlight info;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return;
    info = std::move(it->second.info);
    runs_.erase(it);
  }
  if (on_end_) on_end_(info, audit::NowMs() - info.started_ms, outcome);
}

std::vector<RunInFlight> RunTracker::List() {
  std::vector<RunInFlight> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, e] : runs_) out.push_back(e.info);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RunInFlight& a, const RunInFlight& b) { return a.started_ms < b.started_ms; });
  return out;
}

Status RunTracker::Cancel(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return NotFound("no run \"" + run_id.substr(0, 64) + "\" is in flight");
  it->second.info.cancel_requested = true;
  if (it->second.cancel != nullptr) it->second.cancel->Cancel();
  return OkStatus();
}

size_t RunTracker::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_.size();
}

}  // namespace airlock::mcp
