#include "console/sso_login_store.h"

#include <algorithm>

#include "base/encoding.h"
#include "base/random.h"
#include "console/console_sessions.h"

namespace airlock::console {

namespace {

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string HexToBytes(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  return out;
}

}  // namespace

std::string PkceChallenge(std::string_view code_verifier) {
  std::string b64 = Base64Encode(HexToBytes(Sha256Hex(code_verifier)));
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  std::replace(b64.begin(), b64.end(), '+', '-');
  std::replace(b64.begin(), b64.end(), '/', '_');
  return b64;
}

SsoLoginStore::SsoLoginStore(Options options) : options_(std::move(options)) {}

int64_t SsoLoginStore::Now() const { return options_.now_ms ? options_.now_ms() : SystemNowMs(); }

StatusOr<PendingLogin> SsoLoginStore::Begin() {
  PendingLogin p;
  AIRLOCK_ASSIGN_OR_RETURN(p.state, RandomHex(16));
  AIRLOCK_ASSIGN_OR_RETURN(p.nonce, RandomHex(16));
  AIRLOCK_ASSIGN_OR_RETURN(p.code_verifier, RandomHex(32));
  AIRLOCK_ASSIGN_OR_RETURN(p.binding, RandomHex(16));
  const int64_t now = Now();
  p.expires_ms = now + std::chrono::duration_cast<std::chrono::milliseconds>(options_.ttl).count();
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(pending_, [&](const auto& e) { return e.second.expires_ms <= now; });
  while (pending_.size() >= options_.max_pending && !pending_.empty()) {
    auto oldest = std::min_element(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) {
      return a.second.order < b.second.order;
    });
    pending_.erase(oldest);
  }
  p.order = next_order_++;
  pending_.emplace(p.state, p);
  return p;
}

StatusOr<PendingLogin> SsoLoginStore::Take(std::string_view state, std::string_view binding) {
  PendingLogin p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = state.empty() ? pending_.end() : pending_.find(state);
    if (it == pending_.end()) return NotFound("unknown or already used sign-in state: start the sign-in again");
    p = std::move(it->second);
    pending_.erase(it);  // single use, whatever follows
  }
  if (p.expires_ms <= Now()) return DeadlineExceeded("the sign-in took too long: start it again");
  if (binding.empty() || !ConstantTimeEquals(p.binding, binding)) {
    return PermissionDenied("the sign-in was started by another browser (no matching pre-login cookie)");
  }
  return p;
}

size_t SsoLoginStore::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

}  // namespace airlock::console
