#include "sessions/session_registry.h"

#include <ctime>
#include <iostream>

#include "base/random.h"
#include "base/time_format.h"

namespace airlock::sessions {

using nlohmann::json;


json ToJson(const SessionInfo& s, const config::SessionsConfig& config) {
  return {{"session_id", s.id},
          {"language", s.language},
          {"isolation", s.isolation},
          {"memory_mb", s.memory_mb},
          {"idle_timeout_s", s.idle_timeout_s},
          {"max_lifetime_s", config.max_lifetime_s},
          {"created_at", IsoUtc(s.created_at_ms, true)},
          {"last_used_at", IsoUtc(s.last_used_ms, true)},
          {"expires_at", IsoUtc(s.expires_at_ms, true)},
          {"calls", s.calls}};
}

namespace {

int64_t ExpiresAt(const SessionInfo& s, uint64_t max_lifetime_s) {
  const int64_t idle = s.last_used_ms + static_cast<int64_t>(s.idle_timeout_s) * 1000;
  const int64_t life = s.created_at_ms + static_cast<int64_t>(max_lifetime_s) * 1000;
  return std::min(idle, life);
}

}  // namespace

bool SessionRegistry::Expired(const SessionInfo& s, int64_t now_ms) const {
  if (s.created_at_ms + static_cast<int64_t>(config_.max_lifetime_s) * 1000 <= now_ms) return true;
  return s.calls_in_flight == 0 && s.expires_at_ms <= now_ms;
}

SessionRegistry::SessionRegistry(runtimes::CodeExecutor& executor, const config::SessionsConfig& config,
                                 uint64_t max_total, audit::AuditLog* audit)
    : executor_(executor), config_(config), max_total_(max_total), audit_(audit) {
  reaper_ = std::thread([this] { Reaper(); });
}

SessionRegistry::~SessionRegistry() {
  std::map<std::string, SessionInfo> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left.swap(sessions_);
  }
  cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  for (const auto& [id, s] : left) {
    (void)executor_.CloseSession(id);
    Audit("session_close", s, "server shutdown");
  }
}

void SessionRegistry::Audit(const std::string& kind, const SessionInfo& s, const std::string& reason) {
  if (audit_ == nullptr || !audit_->enabled()) return;
  json detail = {{"language", s.language}, {"isolation", s.isolation}, {"endpoint", s.endpoint},
                 {"memory_mb", s.memory_mb}, {"calls", s.calls}};
  if (!reason.empty()) detail["reason"] = reason;
  if (Status st = audit_->Event({.kind = kind, .actor = s.owner, .target = s.id, .detail = detail}); !st.ok()) {
    std::cerr << "airlock: audit of " << kind << " " << s.id << " failed: " << st.message() << "\n";
  }
}

StatusOr<SessionInfo> SessionRegistry::Open(const std::string& owner, const OpenRequest& request) {
  const uint64_t idle = request.idle_timeout_s ? request.idle_timeout_s : config_.idle_timeout_s;
  if (idle > config_.max_idle_timeout_s) {
    return InvalidArgument("timeout_s " + std::to_string(idle) + " exceeds the maximum of " +
                           std::to_string(config_.max_idle_timeout_s));
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::string hex, RandomHex(16));
  SessionInfo s;
  s.id = "s_" + hex;
  s.owner = owner;
  s.endpoint = request.endpoint;
  s.language = request.language;
  s.isolation = request.isolation;
  s.memory_mb = request.memory_mb;
  s.idle_timeout_s = idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t mine = 0;
    for (const auto& [id, other] : sessions_) mine += other.owner == owner ? 1 : 0;
    if (mine >= config_.max_per_caller) {
      return ResourceExhausted("you have " + std::to_string(mine) + " open sessions, the maximum per caller; close one (close_session) first");
    }
    if (sessions_.size() + opening_ >= max_total_) {
      return ResourceExhausted("the server holds its maximum of " + std::to_string(max_total_) +
                               " open sessions; try again later");
    }
    // Reserve the place while the jail is made (not under the lock).
    ++opening_;
    s.created_at_ms = audit::NowMs();
    s.last_used_ms = s.created_at_ms;
    s.expires_at_ms = ExpiresAt(s, config_.max_lifetime_s);
    s.starting = true;
    sessions_.emplace(s.id, s);
  }
  runtimes::SessionSpec spec{.id = s.id,
                             .language = s.language,
                             .isolation = s.isolation,
                             .memory_mb = s.memory_mb,
                             .cpu_budget_ms = config_.max_cpu_s * 1000};
  Status st = executor_.OpenSession(spec);
  std::lock_guard<std::mutex> lock(mu_);
  --opening_;
  if (!st.ok()) {
    sessions_.erase(s.id);
    return st;
  }
  auto it = sessions_.find(s.id);
  if (it == sessions_.end() || stopping_) {
    // Shut down meanwhile: nothing may stay open.
    (void)executor_.CloseSession(s.id);
    return Unavailable("airlock is shutting down");
  }
  it->second.starting = false;
  it->second.created_at_ms = audit::NowMs();
  it->second.last_used_ms = it->second.created_at_ms;
  it->second.expires_at_ms = ExpiresAt(it->second, config_.max_lifetime_s);
  s = it->second;
  Audit("session_open", s, "");
  return s;
}

StatusOr<SessionInfo> SessionRegistry::BeginCall(const std::string& owner, const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  const int64_t now = audit::NowMs();
  if (it == sessions_.end() || it->second.owner != owner || Expired(it->second, now) || it->second.starting) {
    return NotFound("no open session \"" + id.substr(0, 64) +
                    "\": it does not exist, was closed or expired; open one with open_session");
  }
  SessionInfo& s = it->second;
  ++s.calls;
  ++s.calls_in_flight;
  s.last_used_ms = now;
  s.expires_at_ms = ExpiresAt(s, config_.max_lifetime_s);
  return s;
}

void SessionRegistry::NoteResult(const std::string& id, runtimes::RunResult& result) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (result.error_code == "E_SESSION_NOT_FOUND") {
    // The executor no longer has it: its runner restarted.
    result.error_code = "E_SESSION_LOST";
    result.message =
        "the session was lost: the code runner restarted and its state is gone; open a new session";
  } else if (result.error_code == "runner_unavailable") {
    // The runner that held it stopped (mid-call, or before): it is gone.
    result.error_code = "E_SESSION_LOST";
    result.message = "the session was lost: the code runner stopped (" + result.message +
                     ") and its state is gone; open a new session";
  }
  if (it == sessions_.end()) return;
  SessionInfo& s = it->second;
  if (result.error_code == "E_SESSION_LOST" && s.lost_reason.empty()) {
    s.lost_reason = result.message;
    Audit("session_lost", s, result.message);
  }
}

void SessionRegistry::EndCall(const std::string& id, runtimes::RunResult* result) {
  if (result != nullptr) NoteResult(id, *result);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  SessionInfo& s = it->second;
  if (s.calls_in_flight > 0) --s.calls_in_flight;
  s.last_used_ms = audit::NowMs();  // the idle clock starts when the call ends
  s.expires_at_ms = ExpiresAt(s, config_.max_lifetime_s);
}

Status SessionRegistry::Close(const std::string& owner, const std::string& id) {
  SessionInfo s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.owner != owner || Expired(it->second, audit::NowMs()) ||
        it->second.starting) {
      return NotFound("no open session \"" + id.substr(0, 64) +
                      "\": it does not exist, was closed or expired; open one with open_session");
    }
    s = std::move(it->second);
    sessions_.erase(it);
  }
  Status st = executor_.CloseSession(id);
  Audit("session_close", s, "");
  // NotFound: the runner restarted and the jail is gone already.
  return st.code() == StatusCode::kNotFound ? OkStatus() : st;
}

size_t SessionRegistry::open_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

std::vector<SessionInfo> SessionRegistry::List(const std::string& owner) {
  std::vector<SessionInfo> out;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = audit::NowMs();
  for (const auto& [id, s] : sessions_) {
    if (s.owner == owner && !Expired(s, now) && !s.starting) out.push_back(s);
  }
  return out;
}

size_t SessionRegistry::ExpireNow(int64_t now_ms) {
  std::vector<SessionInfo> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      const SessionInfo& s = it->second;
      const bool past_lifetime = s.created_at_ms + static_cast<int64_t>(config_.max_lifetime_s) * 1000 <= now_ms;
      // A call in flight keeps its session from idling out; not past its lifetime.
      if (s.expires_at_ms <= now_ms && !s.starting && (s.calls_in_flight == 0 || past_lifetime)) {
        expired.push_back(std::move(it->second));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const SessionInfo& s : expired) {
    (void)executor_.CloseSession(s.id);
    const bool idle = s.last_used_ms + static_cast<int64_t>(s.idle_timeout_s) * 1000 <= now_ms;
    Audit("session_expire", s, idle ? "idle timeout" : "maximum lifetime");
  }
  return expired.size();
}

void SessionRegistry::Reaper() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    ExpireNow(audit::NowMs());
    lock.lock();
  }
}

}  // namespace airlock::sessions
