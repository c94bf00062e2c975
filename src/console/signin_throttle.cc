#include "console/signin_throttle.h"

#include <algorithm>
#include <utility>

namespace airlock::console {
namespace {

constexpr size_t kSweepAt = 1024;  // sources kept before those with ended windows are swept

}  // namespace

SignInThrottle::SignInThrottle(Options options) : options_(std::move(options)) {}

SignInThrottle::Source& SignInThrottle::Find(const std::string& source, Clock::time_point now) {
  if (sources_.size() >= kSweepAt && !sources_.count(source)) Forget(now);
  auto [it, fresh] = sources_.try_emplace(source);
  Source& s = it->second;
  if (fresh || now - s.window_start >= options_.window) {
    s.window_start = now;
    s.failures = 0;
    s.summarized = false;
  }
  return s;
}

void SignInThrottle::Forget(Clock::time_point now) {
  for (auto it = sources_.begin(); it != sources_.end();) {
    it = now - it->second.window_start >= options_.window ? sources_.erase(it) : std::next(it);
  }
}

std::optional<uint64_t> SignInThrottle::Refused(Source& s) {
  ++s.unreported;
  if (s.summarized) return std::nullopt;
  s.summarized = true;
  return std::exchange(s.unreported, 0);
}

SignInThrottle::Verdict SignInThrottle::Check(const std::string& source) {
  const Clock::time_point now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sources_.find(source);
  if (it == sources_.end()) return {};
  Source& s = it->second;
  if (s.failures < options_.max_failures || now - s.window_start >= options_.window) return {};
  const int64_t left = std::chrono::ceil<std::chrono::seconds>(s.window_start + options_.window - now).count();
  return {.retry_after_s = std::max<int64_t>(1, left), .audit_attempts = Refused(s)};
}

std::optional<uint64_t> SignInThrottle::Failed(const std::string& source) {
  const Clock::time_point now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  Source& s = Find(source, now);
  if (s.failures >= options_.max_failures) return Refused(s);
  ++s.failures;
  return 1 + std::exchange(s.unreported, 0);
}

uint64_t SignInThrottle::Succeeded(const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sources_.find(source);
  if (it == sources_.end()) return 0;
  const uint64_t unreported = it->second.unreported;
  sources_.erase(it);
  return unreported;
}

}  // namespace airlock::console
