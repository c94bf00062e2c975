// The console's single sign-on pages (console_http.h, oidc_sso.h):
//   GET <prefix>/sso/login     302 to the provider; sets the pre-login cookie
//   GET <prefix>/sso/callback  the provider's answer: a console session for an
//                              administrator, "not an administrator" (403) for
//                              anyone else, a refusal page for a bad answer
// Every outcome is audited like a key sign-in; refusals count towards the
// sign-in throttle of the client's address. Codes and tokens are never
// logged or shown.
#include <httplib.h>

#include "console/console_http.h"
#include "console/console_reply.h"

namespace airlock::console {

using nlohmann::json;

namespace {

constexpr char kPreLoginCookie[] = "airlock_console_sso";

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// A small page of its own (the console's stylesheet, no script). `refresh`:
// where to go on at once (a same-site navigation, so the session's
// SameSite=Strict cookie goes along even after a cross-site redirect).
void ReplyPage(httplib::Response& res, int status, const std::string& prefix, const std::string& title,
               const std::string& message, const std::string& refresh = "") {
  std::string html = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  if (!refresh.empty()) html += "<meta http-equiv=\"refresh\" content=\"0;url=" + HtmlEscape(refresh) + "\">";
  html += "<title>" + HtmlEscape(title) + " · airlock console</title>";
  html += "<link rel=\"stylesheet\" href=\"" + HtmlEscape(prefix) + "/assets/console.css\"></head><body>";
  html += "<section class=\"signin\"><div class=\"sso-result\" data-testid=\"sso-result\"><h1>" + HtmlEscape(title) +
          "</h1><p data-testid=\"sso-message\">" + HtmlEscape(message) + "</p><p><a data-testid=\"sso-back\" href=\"" +
          HtmlEscape(refresh.empty() ? prefix + "/" : refresh) + "\">" +
          (refresh.empty() ? "Back to the console's sign-in" : "Continue to the console") +
          "</a></p></div></section></body></html>\n";
  res.status = status;
  res.set_content(html, "text/html; charset=utf-8");
}

}  // namespace

void ConsoleHttp::SignInOptions(httplib::Response& res) {
  json sso = nullptr;
  if (deps_.sso != nullptr) sso = {{"provider", deps_.sso->provider_name()}, {"login", prefix_ + "/sso/login"}};
  ReplyJson(res, 200, {{"key_signin", deps_.allow_key_signin}, {"sso", std::move(sso)}});
}

void ConsoleHttp::SsoPage(const httplib::Request& req, httplib::Response& res, std::string_view rest) {
  if (deps_.sso == nullptr) return ReplyError(res, 404, "single sign-on is not configured on this server");
  if (req.method != "GET") return ReplyError(res, 405, "single sign-on pages are read with GET");
  if (rest == "login") return SsoLogin(req, res);
  if (rest == "callback") return SsoCallback(req, res);
  ReplyError(res, 404, "no such console page");
}

void ConsoleHttp::SsoLogin(const httplib::Request& req, httplib::Response& res) {
  const std::string& source = req.remote_addr;
  if (SignInThrottle::Verdict v = signin_throttle_.Check(source); v.retry_after_s > 0) {
    res.set_header("Retry-After", std::to_string(v.retry_after_s));
    return ReplyPage(res, 429, prefix_, "Too many failed sign-ins",
                     "Too many failed sign-ins from this address: try again in " + std::to_string(v.retry_after_s) +
                         " s.");
  }
  StatusOr<OidcSso::Started> started = deps_.sso->Begin();
  if (!started.ok()) {
    Audit("console_signin_denied", "", "", {{"reason", started.status().message()}, {"auth", "oidc"}, {"source", source}});
    return ReplyPage(res, 503, prefix_, "Single sign-on is unavailable", started.status().message());
  }
  // The pre-login cookie: Lax, since the provider's redirect back is a
  // cross-site top-level navigation; only the callback's path sees it.
  const int64_t ttl = (started->login.expires_ms - static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      std::chrono::system_clock::now().time_since_epoch())
                                                      .count())) /
                      1000;
  res.set_header("Set-Cookie", std::string(kPreLoginCookie) + "=" + started->login.binding + "; Path=" + prefix_ +
                                   "/sso; Max-Age=" + std::to_string(std::max<int64_t>(ttl, 1)) +
                                   "; HttpOnly; SameSite=Lax" + (deps_.tls ? "; Secure" : ""));
  res.status = 302;
  res.set_header("Location", started->url);
}

void ConsoleHttp::SsoCallback(const httplib::Request& req, httplib::Response& res) {
  const std::string& source = req.remote_addr;
  // The pre-login cookie is spent whatever happens.
  res.set_header("Set-Cookie", std::string(kPreLoginCookie) + "=; Path=" + prefix_ +
                                   "/sso; Max-Age=0; HttpOnly; SameSite=Lax" + (deps_.tls ? "; Secure" : ""));
  if (SignInThrottle::Verdict v = signin_throttle_.Check(source); v.retry_after_s > 0) {
    if (v.audit_attempts) {
      Audit("console_signin_denied", "", "",
            {{"reason", "too many failed sign-ins"}, {"source", source}, {"attempts", *v.audit_attempts}});
    }
    res.set_header("Retry-After", std::to_string(v.retry_after_s));
    return ReplyPage(res, 429, prefix_, "Too many failed sign-ins",
                     "Too many failed sign-ins from this address: try again in " + std::to_string(v.retry_after_s) +
                         " s.");
  }
  auto param = [&](const char* name) {
    std::string v = req.has_param(name) ? req.get_param_value(name) : std::string();
    return v.size() > 4096 ? std::string() : v;
  };
  const ::airlock::console::SsoCallback cb{.state = param("state"),
                       .code = param("code"),
                       .iss = param("iss"),
                       .error = param("error"),
                       .error_description = param("error_description").substr(0, 200)};
  StatusOr<SsoUser> user = deps_.sso->Complete(cb, CookieValue(req.get_header_value("Cookie"), kPreLoginCookie));
  if (!user.ok()) {
    DenySignIn(source, "", "", {{"reason", user.status().message()}, {"auth", "oidc"}});
    const int status = user.status().code() == StatusCode::kUnavailable ? 503 : 403;
    return ReplyPage(res, status, prefix_, "Sign-in refused", user.status().message());
  }
  if (!user->admin) {
    DenySignIn(source, user->user, "",
               {{"reason", "not an administrator"}, {"auth", "oidc"}, {"claim", deps_.sso->config().admin_claim}});
    return ReplyPage(res, 403, prefix_, "Not an administrator",
                     "You signed in as " + user->display_name +
                         ", who is not an administrator of this airlock: the console is for administrators only.");
  }
  const governance::Caller who{.user = user->user, .role = deps_.sso_role, .auth = "oidc", .key_id = ""};
  StatusOr<ConsoleSession> s = sessions_.SignIn(who, user->expires_unix * 1000);
  if (!s.ok()) return ReplyPage(res, 500, prefix_, "Sign-in failed", s.status().message());
  if (s->expires_ms <= s->created_ms) {
    DenySignIn(source, user->user, "", {{"reason", "the ID token has expired"}, {"auth", "oidc"}});
    sessions_.SignOut(s->id);
    return ReplyPage(res, 403, prefix_, "Sign-in refused", "the ID token has expired: sign in again");
  }
  // Two cookies: the session's, and the spent pre-login cookie cleared.
  res.set_header("Set-Cookie", sessions_.CookieFor(*s, deps_.tls));
  if (const uint64_t refused = signin_throttle_.Succeeded(source); refused > 0) {
    Audit("console_signin_denied", "", "",
          {{"reason", "too many failed sign-ins"}, {"source", source}, {"attempts", refused}});
  }
  Audit("console_signin", who.user, "",
        {{"role", who.role}, {"auth", "oidc"}, {"name", user->display_name}, {"expires_at", user->expires_unix}});
  ReplyPage(res, 200, prefix_, "Signed in", "Signed in as " + user->display_name + ".", prefix_ + "/");
}

}  // namespace airlock::console
