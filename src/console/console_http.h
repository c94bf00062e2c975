// The operators' console's HTTP side (issue 18, docs/console.md): served by
// `airlock serve --http` under a configurable prefix (default /console),
// only to callers whose API key has an admin role.
//
//   <prefix>/                 the page (index.html); <prefix>/assets/<file> its
//                             modules and stylesheet, compiled in (static_assets.h)
//   <prefix>/api/...          the JSON API the page uses:
//     POST signin (Authorization: Bearer <admin key>)  GET whoami  POST signout
//     GET tools[?state=&endpoint=]  GET tools/ID  POST tools/ID/{approve,reject,revoke}
//     GET audit?since=&until=&user=&endpoint=&language=&status=&run_id=&type=&limit=
//     GET audit/runs/RUN_ID  GET audit/verify
//     GET keys  POST keys  POST keys/ID/revoke
//     GET live  POST live/cancel
//     GET signin-options  (no session needed: which sign-ins the page offers)
//   <prefix>/sso/login        single sign-on with OpenID Connect (oidc_sso.h,
//   <prefix>/sso/callback     console_sso.cc): to the provider and back
//
// The rules are the CLI's (admin/code_tool_review.h, admin/key_admin.h,
// audit/audit_filters.h): the console is one more way to call them.
// Every answer carries a strict Content-Security-Policy (no inline script),
// X-Frame-Options DENY, nosniff, no referrer and Cache-Control: no-store.
// A state-changing request whose Origin is not this server's own, or whose
// Sec-Fetch-Site is cross-site, gets 403; a missing or wrong CSRF token
// 403; no console session 401; a session whose API key was revoked ends on
// its next request (401). Sign-ins (granted and refused), sign-outs,
// cancels, every refusal of a state change and every admin action are
// audit events. Failed sign-ins are limited per client address
// (signin_throttle.h): past the limit, 429 with Retry-After, and the
// refusals are coalesced into one audit row per window.
#ifndef AIRLOCK_CONSOLE_CONSOLE_HTTP_H_
#define AIRLOCK_CONSOLE_CONSOLE_HTTP_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "auth/key_store.h"
#include "codetools/code_tool_store.h"
#include "console/console_sessions.h"
#include "console/oidc_sso.h"
#include "console/signin_throttle.h"
#include "governance/policy.h"
#include "mcp/run_tracker.h"
#include "mcp/httplib_fwd.h"


namespace airlock::console {

// What the console reads and changes. Null members turn their pages' APIs
// into 503 "not available on this server".
struct ConsoleDeps {
  // The identity of an API key (auth::KeyStore::Authenticate); nullopt: unknown or revoked.
  std::function<std::optional<governance::Caller>(std::string_view token)> authenticate;
  // Whether the key a console session signed in with is still active
  // (auth::KeyStore::IsActive); unset: always.
  std::function<bool(std::string_view key_id)> key_active;
  const governance::Policy* policy = nullptr;  // which roles are admin roles
  mcp::RunTracker* runs = nullptr;
  audit::AuditLog* audit = nullptr;
  codetools::CodeToolStore* code_tools = nullptr;
  auth::KeyStore* keys = nullptr;
  // The live page's health panels (each may be unset).
  std::function<nlohmann::json()> runner_health;     // runner::RunnerClient::Health()
  std::function<nlohmann::json()> connector_health;  // [gateway::Connector::Health()...]
  std::function<nlohmann::json()> session_stats;     // {"open": n, ...}
  bool tls = false;                                  // cookies get Secure
  // Single sign-on with OpenID Connect (server.http.console.sso); null: off.
  OidcSso* sso = nullptr;
  std::string sso_role = "admin";  // the (admin) role of an administrator's SSO session
  bool allow_key_signin = true;    // POST api/signin with an API key
};

class ConsoleHttp {
 public:
  // options.cookie_path is also the prefix served ("/console").
  ConsoleHttp(ConsoleDeps deps, ConsoleSessionOptions options = {}, SignInThrottle::Options signin = {});

  // Handles every request under the prefix (the caller has checked Host).
  void Handle(const httplib::Request& req, httplib::Response& res);

  ConsoleSessions& sessions() { return sessions_; }
  const std::string& prefix() const { return prefix_; }

 private:
  // One signed-in API request.
  struct Call {
    const httplib::Request& req;
    httplib::Response& res;
    const ConsoleSession& session;
    const std::vector<std::string>& path;  // the segments after api/
  };

  void ServePage(const httplib::Request& req, httplib::Response& res, std::string_view rest);
  void Api(const httplib::Request& req, httplib::Response& res, std::string_view api_path);
  void SignIn(const httplib::Request& req, httplib::Response& res);
  void SignInOptions(httplib::Response& res);
  // Single sign-on (console_sso.cc): <prefix>/sso/login and /sso/callback.
  void SsoPage(const httplib::Request& req, httplib::Response& res, std::string_view rest);
  void SsoLogin(const httplib::Request& req, httplib::Response& res);
  void SsoCallback(const httplib::Request& req, httplib::Response& res);
  // A refused sign-in: counted for its source, audited unless coalesced.
  void DenySignIn(const std::string& source, const std::string& actor, const std::string& target,
                  nlohmann::json detail);
  // The signed-in session of `req`, or nullopt after writing 401.
  std::optional<ConsoleSession> Session(const httplib::Request& req, httplib::Response& res);
  // For state changes: same origin and the CSRF token, else 403 (audited).
  bool StateChangeAllowed(const httplib::Request& req, const ConsoleSession& s, httplib::Response& res);
  void Audit(const std::string& kind, const std::string& actor, const std::string& target,
             const nlohmann::json& detail);

  // The pages' APIs, one file each (console_api_*.cc).
  void WhoAmI(const Call& c);
  void Tools(const Call& c);
  void ToolDetail(const Call& c);
  void ToolVerdict(const Call& c);
  void AuditRows(const Call& c);
  void AuditRun(const Call& c);
  void AuditVerify(const Call& c);
  void Keys(const Call& c);
  void CreateKey(const Call& c);
  void RevokeKey(const Call& c);
  void Live(const Call& c);
  void CancelRun(const Call& c);

  const ConsoleDeps deps_;
  const std::string prefix_;
  ConsoleSessions sessions_;
  SignInThrottle signin_throttle_;
};

// The headers every console answer carries.
void SetConsoleHeaders(httplib::Response& res);

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_CONSOLE_HTTP_H_
