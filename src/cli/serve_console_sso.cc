#include "cli/serve_console_sso.h"

#include <fstream>
#include <sstream>

#include "auth/oauth/http_fetch.h"

namespace airlock::cli {

namespace {

StatusOr<std::string> ReadSecret(const std::string& file) {
  const std::string where = "config.server.http.console.sso.client_secret_file";
  std::ifstream in(file, std::ios::binary);
  if (!in) return NotFound(where + ": cannot read " + file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t start = s.find_first_not_of(" \t");
  s = start == std::string::npos ? std::string() : s.substr(start);
  if (s.empty()) return InvalidArgument(where + ": the client secret is empty");
  if (s.find_first_of("\r\n") != std::string::npos) return InvalidArgument(where + ": the client secret must be one line");
  return s;
}

}  // namespace

std::string ConsoleSsoRedirectUri(const config::Config& cfg) {
  const config::HttpConfig& h = cfg.server.http;
  if (!h.console_sso.redirect_uri.empty()) return h.console_sso.redirect_uri;
  const bool https = h.console_https || h.tls.enabled();
  return std::string(https ? "https://" : "http://") + h.listen + h.console_path + "/sso/callback";
}

StatusOr<std::unique_ptr<console::OidcSso>> MakeConsoleSso(const config::Config& cfg,
                                                            const governance::Policy& policy) {
  const config::ConsoleSsoConfig& sso = cfg.server.http.console_sso;
  if (sso.issuer.empty()) return std::unique_ptr<console::OidcSso>();
  const governance::Role* role = policy.FindRole(sso.role);
  if (role == nullptr || !role->admin) {
    return InvalidArgument("config.server.http.console.sso.role: \"" + sso.role + "\" is not an admin role");
  }
  AIRLOCK_ASSIGN_OR_RETURN(std::string secret, ReadSecret(sso.client_secret_file));
  console::OidcSso::Deps deps{
      .get = auth::oauth::HttpGet,
      .post = [](const std::string& url, const std::string& form, const std::string& authorization) {
        return auth::oauth::HttpPostForm(url, form, authorization, auth::oauth::HttpLimits{.connect_s = 5, .read_s = 10,
                                                                                        .max_body = 256 * 1024});
      },
      .now_unix = nullptr,
      .logins = {.ttl = std::chrono::seconds(300)}};
  return std::make_unique<console::OidcSso>(sso, std::move(secret), ConsoleSsoRedirectUri(cfg), std::move(deps));
}

}  // namespace airlock::cli
