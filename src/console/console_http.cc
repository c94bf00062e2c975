#include "console/console_http.h"

#include <httplib.h>

#include "base/encoding.h"
#include "base/time_format.h"
#include "console/console_reply.h"
#include "console/static_assets.h"
#include "mcp/http_security.h"

namespace airlock::console {

using nlohmann::json;

namespace {

// "http://HOST" / "https://HOST" for this request's own Host header.
bool SameOrigin(const httplib::Request& req, bool tls) {
  const std::string origin = req.get_header_value("Origin");
  if (origin.empty()) return true;  // not a browser's cross-origin request (curl, the CLI)
  const std::string host = req.get_header_value("Host");
  return !host.empty() && origin == std::string(tls ? "https://" : "http://") + host;
}

bool CrossSite(const httplib::Request& req, bool tls) {
  return !SameOrigin(req, tls) || req.get_header_value("Sec-Fetch-Site") == "cross-site";
}

std::vector<std::string> Segments(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    const size_t end = slash == std::string_view::npos ? path.size() : slash;
    out.emplace_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
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

ConsoleHttp::ConsoleHttp(ConsoleDeps deps, ConsoleSessionOptions options, SignInThrottle::Options signin)
    : deps_(std::move(deps)),
      prefix_(options.cookie_path),
      sessions_(std::move(options)),
      signin_throttle_(std::move(signin)) {}

void ConsoleHttp::Audit(const std::string& kind, const std::string& actor, const std::string& target,
                        const json& detail) {
  if (deps_.audit == nullptr) return;
  (void)deps_.audit->Event({.kind = kind, .actor = actor, .target = target, .detail = detail});
}

void ConsoleHttp::Handle(const httplib::Request& req, httplib::Response& res) {
  SetConsoleHeaders(res);
  const std::string_view path = req.path;
  if (path.substr(0, prefix_.size()) != prefix_) return ReplyError(res, 404, "not a console path");
  const std::string_view rest = path.substr(prefix_.size());
  if (rest.rfind("/api/", 0) == 0) return Api(req, res, rest.substr(5));
  if (rest.rfind("/sso/", 0) == 0) return SsoPage(req, res, rest.substr(5));
  ServePage(req, res, rest);
}

void ConsoleHttp::ServePage(const httplib::Request& req, httplib::Response& res, std::string_view rest) {
  if (req.method != "GET") return ReplyError(res, 405, "the console's pages are read with GET");
  if (rest.empty()) {  // "/console": the page's relative URLs need the slash
    res.status = 302;
    res.set_header("Location", prefix_ + "/");
    return;
  }
  std::string_view name;
  if (rest == "/" || rest == "/index.html") {
    name = "index.html";
  } else if (rest.rfind("/assets/", 0) == 0 && rest.find('/', 8) == std::string_view::npos) {
    name = rest.substr(8);
  }
  std::optional<StaticAsset> asset = name.empty() ? std::nullopt : FindAsset(name);
  if (!asset) return ReplyError(res, 404, "no such console page");
  res.status = 200;
  res.set_content(std::string(asset->content), std::string(ContentTypeOf(asset->name)));
}

void ConsoleHttp::Api(const httplib::Request& req, httplib::Response& res, std::string_view api_path) {
  const std::vector<std::string> p = Segments(api_path);
  const bool get = req.method == "GET", post = req.method == "POST";
  if (p.size() == 1 && p[0] == "signin") {
    if (!post) return ReplyError(res, 405, "sign in with POST");
    return SignIn(req, res);
  }
  if (p.size() == 1 && p[0] == "signin-options" && get) return SignInOptions(res);
  // Which handler, and whether it changes state (POST: CSRF and same origin).
  using Handler = void (ConsoleHttp::*)(const Call&);
  Handler handler = nullptr;
  bool changes = false;
  const size_t n = p.size();
  const std::string& first = p[0];
  if (n == 1 && first == "whoami" && get) {
    handler = &ConsoleHttp::WhoAmI;
  } else if (n == 1 && first == "signout" && post) {
    changes = true;
  } else if (first == "tools" && get && (n == 1 || n == 2)) {
    handler = n == 1 ? &ConsoleHttp::Tools : &ConsoleHttp::ToolDetail;
  } else if (first == "tools" && post && n == 3 && (p[2] == "approve" || p[2] == "reject" || p[2] == "revoke")) {
    handler = &ConsoleHttp::ToolVerdict;
    changes = true;
  } else if (first == "audit" && get && n == 1) {
    handler = &ConsoleHttp::AuditRows;
  } else if (first == "audit" && get && n == 3 && p[1] == "runs") {
    handler = &ConsoleHttp::AuditRun;
  } else if (first == "audit" && get && n == 2 && p[1] == "verify") {
    handler = &ConsoleHttp::AuditVerify;
  } else if (first == "keys" && n == 1 && (get || post)) {
    handler = get ? &ConsoleHttp::Keys : &ConsoleHttp::CreateKey;
    changes = post;
  } else if (first == "keys" && post && n == 3 && p[2] == "revoke") {
    handler = &ConsoleHttp::RevokeKey;
    changes = true;
  } else if (first == "live" && get && n == 1) {
    handler = &ConsoleHttp::Live;
  } else if (first == "live" && post && n == 2 && p[1] == "cancel") {
    handler = &ConsoleHttp::CancelRun;
    changes = true;
  } else {
    return ReplyError(res, 404, "no such console API (or not with " + req.method + ")");
  }
  std::optional<ConsoleSession> s = Session(req, res);
  if (!s || (changes && !StateChangeAllowed(req, *s, res))) return;
  if (handler == nullptr) {  // sign-out
    sessions_.SignOut(s->id);
    res.set_header("Set-Cookie", sessions_.ClearingCookie(deps_.tls));
    Audit("console_signout", s->who.user, s->who.key_id, json::object());
    res.status = 204;
    return;
  }
  (this->*handler)(Call{req, res, *s, p});
}

void ConsoleHttp::DenySignIn(const std::string& source, const std::string& actor, const std::string& target,
                             json detail) {
  if (std::optional<uint64_t> attempts = signin_throttle_.Failed(source)) {
    detail["source"] = source;
    detail["attempts"] = *attempts;
    Audit("console_signin_denied", actor, target, detail);
  }
}

void ConsoleHttp::SignIn(const httplib::Request& req, httplib::Response& res) {
  // Failed sign-ins are limited per client address: past the limit no key
  // is looked at (a correct one waits the window out too).
  const std::string& source = req.remote_addr;
  if (SignInThrottle::Verdict v = signin_throttle_.Check(source); v.retry_after_s > 0) {
    if (v.audit_attempts) {
      Audit("console_signin_denied", "", "",
            {{"reason", "too many failed sign-ins"}, {"source", source}, {"attempts", *v.audit_attempts}});
    }
    res.set_header("Retry-After", std::to_string(v.retry_after_s));
    return ReplyError(res, 429, "too many failed sign-ins from this address: try again in " +
                                    std::to_string(v.retry_after_s) + " s");
  }
  if (CrossSite(req, deps_.tls)) {
    DenySignIn(source, "", "", {{"reason", "cross-site request"}});
    return ReplyError(res, 403, "cross-site sign-in refused");
  }
  if (!deps_.allow_key_signin) {
    DenySignIn(source, "", "", {{"reason", "API key sign-in is turned off"}});
    return ReplyError(res, 403, "sign-in with an API key is turned off on this server: use single sign-on");
  }
  const std::string authorization = req.get_header_value("Authorization");
  const std::string_view token = mcp::BearerToken(authorization);
  std::optional<governance::Caller> who =
      !token.empty() && deps_.authenticate ? deps_.authenticate(token) : std::nullopt;
  if (!who) {
    DenySignIn(source, "", "", {{"reason", "no valid API key"}});
    res.set_header("WWW-Authenticate", "Bearer realm=\"airlock console\"");
    return ReplyError(res, 401, "sign in with an admin API key (Authorization: Bearer ...)");
  }
  const governance::Role* role = deps_.policy != nullptr ? deps_.policy->FindRole(who->role) : nullptr;
  if (role == nullptr || !role->admin) {
    DenySignIn(source, who->user, who->key_id, {{"reason", "not an admin role"}, {"role", who->role}});
    return ReplyError(res, 403, "the console is for admin roles; role \"" + who->role + "\" is not one");
  }
  StatusOr<ConsoleSession> s = sessions_.SignIn(*who);
  if (!s.ok()) return ReplyStatus(res, s.status());
  res.set_header("Set-Cookie", sessions_.CookieFor(*s, deps_.tls));
  if (const uint64_t refused = signin_throttle_.Succeeded(source); refused > 0) {
    Audit("console_signin_denied", "", "",
          {{"reason", "too many failed sign-ins"}, {"source", source}, {"attempts", refused}});
  }
  Audit("console_signin", who->user, who->key_id, {{"role", who->role}});
  ReplyJson(res, 200,
            {{"user", s->who.user}, {"role", s->who.role}, {"csrf", s->csrf}, {"expires_at", IsoUtc(s->expires_ms)}});
}

std::optional<ConsoleSession> ConsoleHttp::Session(const httplib::Request& req, httplib::Response& res) {
  StatusOr<ConsoleSession> s = sessions_.Find(CookieValue(req.get_header_value("Cookie")));
  if (s.ok() && deps_.key_active && !s->who.key_id.empty() && !deps_.key_active(s->who.key_id)) {
    // The key was revoked (here, by the CLI or by another console): its
    // sign-ins end now, not at their expiry.
    sessions_.EndSessionsOfKey(s->who.key_id);
    Audit("console_session_ended", s->who.user, s->who.key_id, {{"reason", "API key revoked"}});
    s = NotFound("the API key of this sign-in was revoked: sign in again with an active admin key");
  }
  if (!s.ok()) {
    res.set_header("Set-Cookie", sessions_.ClearingCookie(deps_.tls));
    ReplyError(res, 401, s.status().message());
    return std::nullopt;
  }
  return std::move(s).value();
}

bool ConsoleHttp::StateChangeAllowed(const httplib::Request& req, const ConsoleSession& s, httplib::Response& res) {
  std::string reason;
  if (CrossSite(req, deps_.tls)) {
    reason = "cross-site request";
  } else if (Status st = ConsoleSessions::CheckCsrf(s, req.get_header_value("X-CSRF-Token")); !st.ok()) {
    reason = st.message();
  }
  if (reason.empty()) return true;
  Audit("console_denied", s.who.user, req.path, {{"reason", reason}});
  ReplyError(res, 403, reason);
  return false;
}

void ConsoleHttp::WhoAmI(const Call& c) {
  const ConsoleSession& s = c.session;
  json endpoints = json::array();
  json roles = json::array();
  if (deps_.policy != nullptr) {
    for (const governance::Endpoint& e : deps_.policy->endpoints()) endpoints.push_back(e.name);
    roles = deps_.policy->role_names();
  }
  ReplyJson(c.res, 200,
            {{"user", s.who.user},
             {"role", s.who.role},
             {"csrf", s.csrf},
             {"expires_at", IsoUtc(s.expires_ms)},
             {"roles", std::move(roles)},
             {"endpoints", std::move(endpoints)}});
}

}  // namespace airlock::console
