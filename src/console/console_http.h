// The operators' console's HTTP side (issue 18, docs/console.md): served by
// `airlock serve --http` under /console, only to callers whose API key has
// an admin role. This is its first slice: signing in and out, who am I,
// and the live runs (list, cancel). Pages and the other APIs come next.
//
//   POST /console/api/signin   Authorization: Bearer <admin API key>
//        -> 200 {user, role, csrf, expires_at} + Set-Cookie (HttpOnly,
//           SameSite=Strict, Secure over TLS); 401 no/bad key; 403 not admin
//   GET  /console/api/whoami   (cookie) -> {user, role, csrf, expires_at}
//   POST /console/api/signout  (cookie + X-CSRF-Token) -> 204
//   GET  /console/api/live     (cookie) -> {runs: [RunInFlight...]}
//   POST /console/api/live/cancel {run_id}  (cookie + X-CSRF-Token) -> 200 | 404
// Every answer carries a strict Content-Security-Policy, X-Frame-Options
// DENY, nosniff, no referrer and Cache-Control: no-store. A state-changing
// request whose Origin is not this server's own, or whose Sec-Fetch-Site
// is cross-site, gets 403; a missing or wrong CSRF token 403; no console
// session 401. Sign-ins (granted and refused), sign-outs, cancels and
// every refusal of a state change are audit events (kind "console_*").
#ifndef AIRLOCK_CONSOLE_CONSOLE_HTTP_H_
#define AIRLOCK_CONSOLE_CONSOLE_HTTP_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "audit/audit_log.h"
#include "console/console_sessions.h"
#include "governance/policy.h"
#include "mcp/run_tracker.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace airlock::console {

struct ConsoleDeps {
  // The identity of an API key (auth::KeyStore::Authenticate); nullopt: unknown or revoked.
  std::function<std::optional<governance::Caller>(std::string_view token)> authenticate;
  const governance::Policy* policy = nullptr;  // which roles are admin roles
  mcp::RunTracker* runs = nullptr;
  audit::AuditLog* audit = nullptr;  // may be null
  bool tls = false;                  // cookies get Secure
};

class ConsoleHttp {
 public:
  ConsoleHttp(ConsoleDeps deps, ConsoleSessionOptions options = {});

  // The path prefix it serves.
  static constexpr std::string_view kPrefix = "/console";
  // Handles every request under kPrefix (the caller has checked Host).
  void Handle(const httplib::Request& req, httplib::Response& res);

  ConsoleSessions& sessions() { return sessions_; }

 private:
  void SignIn(const httplib::Request& req, httplib::Response& res);
  // The signed-in session of `req`, or nullopt after writing 401.
  std::optional<ConsoleSession> Session(const httplib::Request& req, httplib::Response& res);
  // For state changes: same origin and the CSRF token, else 403 (audited).
  bool StateChangeAllowed(const httplib::Request& req, const ConsoleSession& s, httplib::Response& res);
  void Audit(const std::string& kind, const std::string& actor, const std::string& target,
             const nlohmann::json& detail);

  const ConsoleDeps deps_;
  ConsoleSessions sessions_;
};

// The headers every console answer carries.
void SetConsoleHeaders(httplib::Response& res);

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_CONSOLE_HTTP_H_
