#include "sessions/memory_session_book.h"

#include <algorithm>

namespace airlock::sessions {
namespace {

// The idle deadline, never past the end of the lifetime.
void Touch(SessionInfo& s, int64_t now_ms) {
  s.last_used_ms = now_ms;
  s.expires_at_ms = std::min(now_ms + static_cast<int64_t>(s.idle_timeout_s) * 1000, s.ends_at_ms);
}

}  // namespace

Status MemorySessionBook::Reserve(const SessionInfo& row, uint64_t max_per_caller, uint64_t max_total) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t mine = 0;
  for (const auto& [id, other] : rows_) mine += other.owner == row.owner ? 1 : 0;
  if (mine >= max_per_caller) {
    return ResourceExhausted("you have " + std::to_string(mine) +
                             " open sessions, the maximum per caller; close one (close_session) first");
  }
  if (rows_.size() >= max_total) {
    return ResourceExhausted("the server holds its maximum of " + std::to_string(max_total) +
                             " open sessions; try again later");
  }
  if (rows_.count(row.id)) return Internal("duplicate session id");
  SessionInfo s = row;
  s.starting = true;
  rows_.emplace(s.id, std::move(s));
  return OkStatus();
}

StatusOr<SessionInfo> MemorySessionBook::Activate(const std::string& id, const std::string& runner_host,
                                                  int64_t now_ms, uint64_t max_lifetime_s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rows_.find(id);
  if (it == rows_.end() || !it->second.starting) return NotFound("no such session");
  SessionInfo& s = it->second;
  s.starting = false;
  s.runner_host = runner_host;
  s.created_at_ms = now_ms;
  s.ends_at_ms = now_ms + static_cast<int64_t>(max_lifetime_s) * 1000;
  Touch(s, now_ms);
  return s;
}

void MemorySessionBook::Abandon(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rows_.find(id);
  if (it != rows_.end() && it->second.starting) rows_.erase(it);
}

SessionInfo* MemorySessionBook::Usable(const std::string& owner, const std::string& id, int64_t now_ms) {
  auto it = rows_.find(id);
  if (it == rows_.end() || it->second.owner != owner || it->second.starting || Expired(it->second, now_ms)) {
    return nullptr;
  }
  return &it->second;
}

StatusOr<SessionInfo> MemorySessionBook::BeginCall(const std::string& owner, const std::string& id, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  SessionInfo* s = Usable(owner, id, now_ms);
  if (s == nullptr) return NotFound("no such session");
  ++s->calls;
  ++s->calls_in_flight;
  Touch(*s, now_ms);
  return *s;
}

void MemorySessionBook::EndCall(const std::string& id, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rows_.find(id);
  if (it == rows_.end()) return;
  if (it->second.calls_in_flight > 0) --it->second.calls_in_flight;
  Touch(it->second, now_ms);
}

std::optional<SessionInfo> MemorySessionBook::NoteLost(const std::string& id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rows_.find(id);
  if (it == rows_.end() || !it->second.lost_reason.empty()) return std::nullopt;
  it->second.lost_reason = reason;
  return it->second;
}

std::optional<SessionInfo> MemorySessionBook::Rehome(const std::string& id, const std::string& from,
                                                     const std::string& to) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = rows_.find(id);
  if (it == rows_.end() || it->second.runner_host != from) return std::nullopt;
  it->second.runner_host = to;
  return it->second;
}

StatusOr<SessionInfo> MemorySessionBook::Remove(const std::string& owner, const std::string& id, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Usable(owner, id, now_ms) == nullptr) return NotFound("no such session");
  auto it = rows_.find(id);
  SessionInfo s = std::move(it->second);
  rows_.erase(it);
  return s;
}

std::vector<SessionInfo> MemorySessionBook::List(const std::string& owner, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SessionInfo> out;
  for (const auto& [id, s] : rows_) {
    if (s.owner == owner && !s.starting && !Expired(s, now_ms)) out.push_back(s);
  }
  return out;
}

size_t MemorySessionBook::Count() {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_.size();
}

std::vector<SessionInfo> MemorySessionBook::ClaimExpired(int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SessionInfo> out;
  for (auto it = rows_.begin(); it != rows_.end();) {
    // A reservation is never claimed here: its Open is still running in this process.
    if (!it->second.starting && Expired(it->second, now_ms)) {
      out.push_back(std::move(it->second));
      it = rows_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<SessionInfo> MemorySessionBook::TakeAll() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SessionInfo> out;
  for (auto& [id, s] : rows_) out.push_back(std::move(s));
  rows_.clear();
  return out;
}

}  // namespace airlock::sessions
