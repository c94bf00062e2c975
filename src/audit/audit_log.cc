#include "audit/audit_log.h"

#include <sys/random.h>

#include <cerrno>
#include <chrono>
#include <iostream>
#include <random>

#include "state/state_stores.h"

namespace airlock::audit {
namespace {

constexpr int64_t kWarningIntervalMs = 60'000;

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const config::Config& config) {
  const bool fail_closed = config.audit.fail_closed;
  if (!config.audit.enabled) return std::make_unique<AuditLog>(nullptr, fail_closed);
  StatusOr<std::unique_ptr<AuditStore>> store = state::OpenAuditStore(config);
  if (store.ok()) return std::make_unique<AuditLog>(std::move(*store), fail_closed);
  const Status error = store.status().WithContext("audit log " + state::AuditStoreLocation(config));
  if (fail_closed) return error;
  std::cerr << "airlock: WARNING: " << error.message()
            << "; running WITHOUT an audit log (audit.fail_closed is false)\n";
  auto log = std::make_unique<AuditLog>(nullptr, fail_closed);
  log->degraded_ = true;
  return log;
}

AuditLog::AuditLog(std::unique_ptr<AuditStore> store, bool fail_closed)
    : store_(std::move(store)), fail_closed_(fail_closed) {}

Status AuditLog::BeginRun(const std::string& run_id, const std::string& actor,
                          const nlohmann::json& detail) {
  return Event({.at = NowMs(), .kind = "run_start", .actor = actor, .target = run_id, .detail = detail});
}

Status AuditLog::Observed(const char* what, Status st) {
  if (observer_.on_write) observer_.on_write(what, st.ok());
  return Check(std::move(st));
}

Status AuditLog::EndRun(const RunRecord& run, const std::vector<CallRow>& calls) {
  if (observer_.on_call) {
    for (const CallRow& c : calls) observer_.on_call(c);
  }
  if (!store_) return OkStatus();
  return Observed("run", store_->AppendRunWithCalls(run, calls));
}

Status AuditLog::Event(const EventRow& event) {
  if (!store_) return OkStatus();
  if (event.at != 0) return Observed("event", store_->AppendEvent(event));
  EventRow stamped = event;
  stamped.at = NowMs();
  return Observed("event", store_->AppendEvent(stamped));
}

Status AuditLog::Call(const CallRow& call) {
  if (observer_.on_call) observer_.on_call(call);
  if (!store_) return OkStatus();
  return Observed("call", store_->AppendCall(call));
}

Status AuditLog::Check(Status st) {
  if (st.ok() || fail_closed_) return st;
  const int64_t now = SteadyNowMs();
  std::lock_guard<std::mutex> lock(mu_);
  if (last_warning_ms_ != 0 && now - last_warning_ms_ < kWarningIntervalMs) {
    ++suppressed_;
    return OkStatus();
  }
  std::cerr << "airlock: WARNING: audit log write failed, continuing (audit.fail_closed is false): "
            << st.message();
  if (suppressed_ > 0) std::cerr << " (and " << suppressed_ << " more since the last warning)";
  std::cerr << "\n";
  last_warning_ms_ = now;
  suppressed_ = 0;
  return OkStatus();
}

std::string NewRunId() {
  uint8_t bytes[8];
  size_t done = 0;
  while (done < sizeof bytes) {
    const ssize_t got = getrandom(bytes + done, sizeof bytes - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    done += static_cast<size_t>(got);
  }
  if (done < sizeof bytes) {  // no getrandom (old kernel, seccomp): the OS entropy device
    std::random_device rd;
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rd());
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string id = "r_";
  for (uint8_t b : bytes) {
    id.push_back(kDigits[b >> 4]);
    id.push_back(kDigits[b & 15]);
  }
  return id;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace airlock::audit
