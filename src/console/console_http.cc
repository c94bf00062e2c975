#include "console/console_http.h"

#include <httplib.h>

#include "base/encoding.h"
#include "base/time_format.h"
#include "mcp/http_security.h"

namespace airlock::console {

using nlohmann::json;

namespace {

void Json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void Error(httplib::Response& res, int status, const std::string& message) {
  Json(res, status, {{"error", message}});
}

json Me(const ConsoleSession& s) {
  return {{"user", s.who.user}, {"role", s.who.role}, {"csrf", s.csrf}, {"expires_at", IsoUtc(s.expires_ms)}};
}

// "http://HOST" / "https://HOST" for this request's own Host header.
bool SameOrigin(const httplib::Request& req, bool tls) {
  const std::string origin = req.get_header_value("Origin");
  if (origin.empty()) return true;  // not a browser's cross-origin request (curl, the CLI)
  const std::string host = req.get_header_value("Host");
  return !host.empty() && origin == std::string(tls ? "https://" : "http://") + host;
}

}  // namespace

void SetConsoleHeaders(httplib::Response& res) {
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                 "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-store");
  res.set_header("Cross-Origin-Opener-Policy", "same-origin");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
}

ConsoleHttp::ConsoleHttp(ConsoleDeps deps, ConsoleSessionOptions options)
    : deps_(std::move(deps)), sessions_(std::move(options)) {}

void ConsoleHttp::Audit(const std::string& kind, const std::string& actor, const std::string& target,
                        const json& detail) {
  if (deps_.audit == nullptr) return;
  (void)deps_.audit->Event({.kind = kind, .actor = actor, .target = target, .detail = detail});
}

void ConsoleHttp::Handle(const httplib::Request& req, httplib::Response& res) {
  SetConsoleHeaders(res);
  const std::string& path = req.path;
  if (path == "/console/api/signin" && req.method == "POST") return SignIn(req, res);
  if (path == "/console/api/whoami" && req.method == "GET") {
    if (auto s = Session(req, res)) Json(res, 200, Me(*s));
    return;
  }
  if (path == "/console/api/signout" && req.method == "POST") {
    auto s = Session(req, res);
    if (!s || !StateChangeAllowed(req, *s, res)) return;
    sessions_.SignOut(s->id);
    res.set_header("Set-Cookie", sessions_.ClearingCookie(deps_.tls));
    Audit("console_signout", s->who.user, s->who.key_id, json::object());
    res.status = 204;
    return;
  }
  if (path == "/console/api/live" && req.method == "GET") {
    auto s = Session(req, res);
    if (!s) return;
    json runs = json::array();
    if (deps_.runs != nullptr) {
      for (const mcp::RunInFlight& r : deps_.runs->List()) runs.push_back(mcp::ToJson(r));
    }
    Json(res, 200, {{"runs", std::move(runs)}});
    return;
  }
  if (path == "/console/api/live/cancel" && req.method == "POST") {
    auto s = Session(req, res);
    if (!s || !StateChangeAllowed(req, *s, res)) return;
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.contains("run_id") || !body["run_id"].is_string()) {
      return Error(res, 400, "expected {\"run_id\": \"r_...\"}");
    }
    const std::string run_id = body["run_id"].get<std::string>();
    Status st = deps_.runs != nullptr ? deps_.runs->Cancel(run_id) : NotFound("no runs are tracked");
    Audit("console_cancel", s->who.user, SanitizeUtf8(run_id.substr(0, 64)),
          {{"result", st.ok() ? "cancelled" : st.message()}});
    if (!st.ok()) return Error(res, 404, st.message());
    Json(res, 200, {{"run_id", run_id}, {"cancelled", true}});
    return;
  }
  Error(res, 404, "no such console page or API");
}

void ConsoleHttp::SignIn(const httplib::Request& req, httplib::Response& res) {
  if (!SameOrigin(req, deps_.tls) || req.get_header_value("Sec-Fetch-Site") == "cross-site") {
    Audit("console_signin_denied", "", "", {{"reason", "cross-site request"}});
    return Error(res, 403, "cross-site sign-in refused");
  }
  const std::string authorization = req.get_header_value("Authorization");
  const std::string_view token = mcp::BearerToken(authorization);
  std::optional<governance::Caller> who =
      !token.empty() && deps_.authenticate ? deps_.authenticate(token) : std::nullopt;
  if (!who) {
    Audit("console_signin_denied", "", "", {{"reason", "no valid API key"}});
    res.set_header("WWW-Authenticate", "Bearer realm=\"airlock console\"");
    return Error(res, 401, "sign in with an admin API key (Authorization: Bearer ...)");
  }
  const governance::Role* role = deps_.policy != nullptr ? deps_.policy->FindRole(who->role) : nullptr;
  if (role == nullptr || !role->admin) {
    Audit("console_signin_denied", who->user, who->key_id, {{"reason", "not an admin role"}, {"role", who->role}});
    return Error(res, 403, "the console is for admin roles; role \"" + who->role + "\" is not one");
  }
  StatusOr<ConsoleSession> s = sessions_.SignIn(*who);
  if (!s.ok()) return Error(res, 500, s.status().message());
  res.set_header("Set-Cookie", sessions_.CookieFor(*s, deps_.tls));
  Audit("console_signin", who->user, who->key_id, {{"role", who->role}});
  Json(res, 200, Me(*s));
}

std::optional<ConsoleSession> ConsoleHttp::Session(const httplib::Request& req, httplib::Response& res) {
  StatusOr<ConsoleSession> s = sessions_.Find(CookieValue(req.get_header_value("Cookie")));
  if (!s.ok()) {
    res.set_header("Set-Cookie", sessions_.ClearingCookie(deps_.tls));
    Error(res, 401, s.status().message());
    return std::nullopt;
  }
  return std::move(s).value();
}

bool ConsoleHttp::StateChangeAllowed(const httplib::Request& req, const ConsoleSession& s, httplib::Response& res) {
  std::string reason;
  if (!SameOrigin(req, deps_.tls) || req.get_header_value("Sec-Fetch-Site") == "cross-site") {
    reason = "cross-site request";
  } else if (Status st = ConsoleSessions::CheckCsrf(s, req.get_header_value("X-CSRF-Token")); !st.ok()) {
    reason = st.message();
  }
  if (reason.empty()) return true;
  Audit("console_denied", s.who.user, req.path, {{"reason", reason}});
  Error(res, 403, reason);
  return false;
}

}  // namespace airlock::console
