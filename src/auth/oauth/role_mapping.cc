#include "auth/oauth/role_mapping.h"

#include <algorithm>

namespace airlock::auth::oauth {
namespace {

bool ClaimHas(const nlohmann::json& claims, const std::string& name, const std::string& value) {
  if (!claims.contains(name)) return false;
  const nlohmann::json& c = claims[name];
  if (c.is_string()) {
    const std::string s = c.get<std::string>();
    if (s == value) return true;
    std::vector<std::string> words = SplitScopes(s);
    return std::find(words.begin(), words.end(), value) != words.end();
  }
  if (c.is_array()) {
    for (const nlohmann::json& v : c) {
      if (v.is_string() && v.get<std::string>() == value) return true;
    }
  }
  if (c.is_boolean()) return (value == "true") == c.get<bool>();
  return false;
}

std::string Sanitize(std::string_view s, size_t max) {
  std::string out;
  for (char ch : s.substr(0, max)) {
    const bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                    ch == '_' || ch == '.' || ch == '-' || ch == '@';
    out.push_back(ok ? ch : '_');
  }
  return out;
}

}  // namespace

std::optional<std::string> MapRole(const std::vector<config::OAuthRoleRule>& rules, const TokenClaims& token) {
  for (const config::OAuthRoleRule& r : rules) {
    if (!r.scope.empty() && std::find(token.scopes.begin(), token.scopes.end(), r.scope) == token.scopes.end()) {
      continue;
    }
    if (!r.claim.empty() && !ClaimHas(token.claims, r.claim, r.value)) continue;
    return r.role;
  }
  return std::nullopt;
}

std::string OAuthUser(const TokenClaims& token) {
  std::string host = token.issuer;
  if (size_t p = host.find("://"); p != std::string::npos) host = host.substr(p + 3);
  host = host.substr(0, host.find('/'));
  return "oauth:" + Sanitize(token.subject, 128) + "@" + Sanitize(host, 128);
}

}  // namespace airlock::auth::oauth
