#include "auth/oauth/discovery.h"

#include <nlohmann/json.hpp>

namespace airlock::auth::oauth {

StatusOr<std::string> DiscoverEndpoint(const std::string& issuer, const Fetcher& fetch, const std::string& key) {
  std::string errors;
  auto note = [&errors](const std::string& e) { errors += (errors.empty() ? "" : "; ") + e; };
  for (const std::string& url : {AuthorizationServerMetadataUrl(issuer), OpenIdConfigurationUrl(issuer)}) {
    StatusOr<std::string> body = fetch(url);
    if (!body.ok()) {
      note(body.status().message());
      continue;
    }
    nlohmann::json m = nlohmann::json::parse(*body, nullptr, false);
    if (!m.is_object() || m.value("issuer", "") != issuer) {
      note(url + ": not metadata of issuer " + issuer);
      continue;
    }
    if (!m.contains(key) || !m[key].is_string()) {
      note(url + ": no " + key);
      continue;
    }
    return m[key].get<std::string>();
  }
  return Unavailable("authorization server discovery failed: " + errors);
}

}  // namespace airlock::auth::oauth
