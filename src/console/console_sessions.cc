#include "console/console_sessions.h"

#include <algorithm>

#include "base/random.h"

namespace airlock::console {

namespace {

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semi = header.find(';');
    std::string_view part = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    if (Trim(part.substr(0, eq)) == name) return Trim(part.substr(eq + 1));
  }
  return "";
}

ConsoleSessions::ConsoleSessions(ConsoleSessionOptions options) : options_(std::move(options)) {}

int64_t ConsoleSessions::Now() const { return options_.now_ms ? options_.now_ms() : SystemNowMs(); }

StatusOr<ConsoleSession> ConsoleSessions::SignIn(const governance::Caller& who, int64_t hard_expires_ms) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string id, RandomHex(16));
  AIRLOCK_ASSIGN_OR_RETURN(std::string csrf, RandomHex(16));
  ConsoleSession s{.id = id, .csrf = csrf, .who = who, .created_ms = Now(), .expires_ms = 0};
  s.expires_ms = s.created_ms + std::chrono::duration_cast<std::chrono::milliseconds>(options_.lifetime).count();
  s.hard_expires_ms = hard_expires_ms;
  if (hard_expires_ms > 0) s.expires_ms = std::min(s.expires_ms, hard_expires_ms);
  std::lock_guard<std::mutex> lock(mu_);
  // Expired ones go first; past the cap, the oldest.
  std::erase_if(sessions_, [&](const auto& e) { return e.second.expires_ms <= s.created_ms; });
  while (sessions_.size() >= options_.max_sessions && !sessions_.empty()) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
      return a.second.created_ms < b.second.created_ms;
    });
    sessions_.erase(oldest);
  }
  sessions_.emplace(s.id, s);
  return s;
}

StatusOr<ConsoleSession> ConsoleSessions::Find(std::string_view id) {
  const int64_t now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.expires_ms <= now) {
    if (it != sessions_.end()) sessions_.erase(it);
    return NotFound("not signed in, or the console session expired: sign in again");
  }
  ConsoleSession& s = it->second;
  const int64_t idle = std::chrono::duration_cast<std::chrono::milliseconds>(options_.lifetime).count();
  const int64_t cap = s.created_ms + std::chrono::duration_cast<std::chrono::milliseconds>(options_.max_lifetime).count();
  s.expires_ms = std::min(now + idle, s.hard_expires_ms > 0 ? std::min(cap, s.hard_expires_ms) : cap);
  return s;
}

Status ConsoleSessions::CheckCsrf(const ConsoleSession& session, std::string_view token) {
  if (token.empty() || !ConstantTimeEquals(session.csrf, token)) {
    return PermissionDenied("missing or wrong CSRF token");
  }
  return OkStatus();
}

void ConsoleSessions::SignOut(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = sessions_.find(id); it != sessions_.end()) sessions_.erase(it);
}

size_t ConsoleSessions::EndSessionsOfKey(std::string_view key_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::erase_if(sessions_, [&](const auto& e) { return !key_id.empty() && e.second.who.key_id == key_id; });
}

std::string ConsoleSessions::CookieFor(const ConsoleSession& session, bool secure) const {
  const int64_t max_age = std::max<int64_t>(0, (session.expires_ms - Now()) / 1000);
  return std::string(kCookieName) + "=" + session.id + "; Path=" + options_.cookie_path +
         "; Max-Age=" + std::to_string(max_age) + "; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "");
}

std::string ConsoleSessions::ClearingCookie(bool secure) const {
  return std::string(kCookieName) + "=; Path=" + options_.cookie_path + "; Max-Age=0; HttpOnly; SameSite=Strict" +
         (secure ? "; Secure" : "");
}

size_t ConsoleSessions::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

}  // namespace airlock::console
