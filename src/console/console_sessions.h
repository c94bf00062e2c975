// Sign-in state of the operators' console (issue 18, docs/console.md): who
// is signed in through which browser, for how long, and the CSRF token that
// every state-changing request must carry.
//
// An operator signs in with an API key whose role is an admin role; the
// HTTP layer has checked the key and the role before calling SignIn. The
// console then works with a short-lived session held in an HttpOnly,
// SameSite=Strict cookie (Secure when served over TLS) and a per-session
// CSRF token sent back in a header (double submit is not enough: the token
// lives only in the page's memory, never in a cookie).
//
//   ConsoleSessions sessions({.lifetime = std::chrono::minutes(15)});
//   StatusOr<ConsoleSession> s = sessions.SignIn(caller);
//   res.set_header("Set-Cookie", sessions.CookieFor(*s, /*secure=*/false));
//   StatusOr<ConsoleSession> again = sessions.Find(CookieValue(req.get_header_value("Cookie")));
//   Status ok = sessions.CheckCsrf(*again, req.get_header_value("X-CSRF-Token"));
//
// A session ends at its expiry (no sliding renewal past `max_lifetime`),
// at sign-out, and when its key is revoked (EndSessionsOfKey). Thread-safe.
#ifndef AIRLOCK_CONSOLE_CONSOLE_SESSIONS_H_
#define AIRLOCK_CONSOLE_CONSOLE_SESSIONS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "governance/policy.h"

namespace airlock::console {

inline constexpr char kCookieName[] = "airlock_console";

struct ConsoleSession {
  std::string id;    // the cookie value: 128 random bits, hex
  std::string csrf;  // 128 random bits, hex; required on every state change
  governance::Caller who;
  int64_t created_ms = 0;
  int64_t expires_ms = 0;
  // Never past this, used or not (0: only max_lifetime): a single sign-on
  // session ends with its ID token (oidc_sso.h).
  int64_t hard_expires_ms = 0;
};

struct ConsoleSessionOptions {
  std::chrono::seconds lifetime{15 * 60};  // idle: each use moves it, up to max_lifetime
  std::chrono::seconds max_lifetime{8 * 60 * 60};
  std::string cookie_path = "/console";
  size_t max_sessions = 256;  // the oldest go first past it
  std::function<int64_t()> now_ms;  // default: the system clock (tests inject one)
};

class ConsoleSessions {
 public:
  explicit ConsoleSessions(ConsoleSessionOptions options = {});

  // `hard_expires_ms` (0: none) caps the session below max_lifetime.
  StatusOr<ConsoleSession> SignIn(const governance::Caller& who, int64_t hard_expires_ms = 0);
  // The live session with this cookie value (its idle deadline moves);
  // NotFound when unknown, ended or expired (one message for all three).
  StatusOr<ConsoleSession> Find(std::string_view id);
  // PermissionDenied unless `token` equals the session's (constant time).
  static Status CheckCsrf(const ConsoleSession& session, std::string_view token);
  void SignOut(std::string_view id);
  // Ends every session signed in with the API key `key_id`; returns how many.
  size_t EndSessionsOfKey(std::string_view key_id);

  // "airlock_console=<id>; Path=/console; Max-Age=<s>; HttpOnly; SameSite=Strict[; Secure]".
  std::string CookieFor(const ConsoleSession& session, bool secure) const;
  // The header that clears the cookie (sign-out, expired session).
  std::string ClearingCookie(bool secure) const;
  size_t size();

 private:
  int64_t Now() const;

  const ConsoleSessionOptions options_;
  std::mutex mu_;
  std::map<std::string, ConsoleSession, std::less<>> sessions_;  // by id
};

// The value of cookie `name` in a Cookie header ("a=1; airlock_console=x"),
// or "" when absent.
std::string CookieValue(std::string_view cookie_header, std::string_view name = kCookieName);

// Equal contents, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_CONSOLE_SESSIONS_H_
