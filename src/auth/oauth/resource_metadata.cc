#include "auth/oauth/resource_metadata.h"

#include "auth/oauth/http_fetch.h"

namespace airlock::auth::oauth {
namespace {

constexpr char kWellKnown[] = "/.well-known/oauth-protected-resource";

std::string Origin(const std::string& uri) {
  const size_t scheme = uri.find("://");
  if (scheme == std::string::npos) return uri;
  const size_t path = uri.find('/', scheme + 3);
  return path == std::string::npos ? uri : uri.substr(0, path);
}

std::string Quoted(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) out.push_back(c);
  }
  return "\"" + out + "\"";
}

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

nlohmann::json ProtectedResourceMetadata(const config::OAuthConfig& cfg) {
  nlohmann::json m = {
      {"resource", cfg.resource},
      {"authorization_servers", cfg.authorization_servers.empty() ? std::vector<std::string>{cfg.issuer}
                                                                  : cfg.authorization_servers},
      {"bearer_methods_supported", {"header"}},
  };
  if (!cfg.scopes_supported.empty()) m["scopes_supported"] = cfg.scopes_supported;
  return m;
}

std::vector<std::string> MetadataPaths(const std::vector<std::string>& endpoint_paths) {
  std::vector<std::string> out = {kWellKnown};
  for (const std::string& p : endpoint_paths) out.push_back(kWellKnown + p);
  return out;
}

std::string MetadataUrl(const std::string& resource, const std::string& endpoint_path) {
  return Origin(resource) + kWellKnown + endpoint_path;
}

std::string BearerChallenge(const std::string& metadata_url, const std::string& scope, const std::string& error,
                            const std::string& description) {
  std::string h = "Bearer resource_metadata=" + Quoted(metadata_url);
  if (!scope.empty()) h += ", scope=" + Quoted(scope);
  if (!error.empty()) h += ", error=" + Quoted(error);
  if (!description.empty()) h += ", error_description=" + Quoted(description);
  return h;
}

Status CheckOAuthConfig(const config::OAuthConfig& cfg, bool listener_is_loopback) {
  const std::string where = "config.server.http.oauth";
  if (!StartsWith(cfg.issuer, "https://") && !StartsWith(cfg.issuer, "http://")) {
    return InvalidArgument(where + ".issuer: expected an absolute http(s) URI");
  }
  if (StartsWith(cfg.issuer, "http://") && !IsLoopbackHttpUrl(cfg.issuer)) {
    return InvalidArgument(where + ".issuer: must be https:// (plain http only on loopback)");
  }
  if (cfg.resource.empty()) return InvalidArgument(where + ".resource: required (this server's canonical URI)");
  if (cfg.resource.find('#') != std::string::npos) return InvalidArgument(where + ".resource: must have no fragment");
  const bool https = StartsWith(cfg.resource, "https://");
  if (!https && !IsLoopbackHttpUrl(cfg.resource)) {
    return InvalidArgument(where + ".resource: must be https:// (plain http only for a loopback host)");
  }
  if (!listener_is_loopback && !cfg.behind_tls_proxy) {
    return InvalidArgument(where +
                           ": OAuth over plain HTTP on a non-loopback listener; give the listener a certificate "
                           "(server.http.tls.cert_file and key_file), or put a TLS-terminating proxy in front and "
                           "set behind_tls_proxy: true");
  }
  const std::string& introspect = cfg.introspection.endpoint;
  if (!cfg.introspection.client_id.empty() && !introspect.empty() && !StartsWith(introspect, "https://") &&
      !IsLoopbackHttpUrl(introspect)) {
    return InvalidArgument(where + ".introspection.endpoint: must be https:// (plain http only on loopback); the "
                                   "client secret is sent to it");
  }
  for (size_t i = 0; i < cfg.role_rules.size(); ++i) {
    const config::OAuthRoleRule& r = cfg.role_rules[i];
    const std::string at = where + ".role_rules[" + std::to_string(i) + "]";
    if (r.role.empty()) return InvalidArgument(at + ": role is required");
    if (r.scope.empty() && r.claim.empty()) return InvalidArgument(at + ": give a scope, a claim, or both");
    if (!r.claim.empty() && r.value.empty()) return InvalidArgument(at + ": a claim needs a value");
  }
  return OkStatus();
}

}  // namespace airlock::auth::oauth
