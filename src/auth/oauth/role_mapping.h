// Which airlock role a valid token gets: the first rule of
// server.http.oauth.role_rules whose scope the token has (when the rule
// names one) and whose claim equals or contains the value (when it names
// one: a string claim equal to it or with it as a space-separated word, or
// an array claim containing it). No matching rule: no role (403).
#ifndef AIRLOCK_AUTH_OAUTH_ROLE_MAPPING_H_
#define AIRLOCK_AUTH_OAUTH_ROLE_MAPPING_H_

#include <optional>
#include <string>
#include <vector>

#include "auth/oauth/jwt_validator.h"
#include "config/config.h"

namespace airlock::auth::oauth {

std::optional<std::string> MapRole(const std::vector<config::OAuthRoleRule>& rules, const TokenClaims& token);

// The airlock user of a token: "oauth:<sub>@<host of iss>" (sub and host
// reduced to [A-Za-z0-9_.@-], other bytes as '_').
std::string OAuthUser(const TokenClaims& token);

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_ROLE_MAPPING_H_
