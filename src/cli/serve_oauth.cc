#include "cli/serve_oauth.h"

#include <chrono>
#include <iostream>

#include "audit/event_coalescer.h"
#include "auth/oauth/http_fetch.h"
#include "auth/oauth/introspection.h"
#include "auth/oauth/resource_metadata.h"
#include "mcp/http_security.h"

namespace airlock::cli {

StatusOr<std::unique_ptr<auth::oauth::OAuthAuthenticator>> InstallOAuth(const config::Config& cfg,
                                                                         mcp::HttpOptions* http,
                                                                         audit::AuditLog* audit) {
  const config::OAuthConfig& oc = cfg.server.http.oauth;
  if (oc.issuer.empty()) return std::unique_ptr<auth::oauth::OAuthAuthenticator>();
  // Bearer tokens in clear text only on loopback: elsewhere the listener is
  // TLS itself (server.http.tls), or behind a TLS-terminating proxy.
  AIRLOCK_RETURN_IF_ERROR(
      auth::oauth::CheckOAuthConfig(oc, mcp::IsLoopbackName(http->host) || http->tls != nullptr));
  if (http->tls != nullptr && oc.resource.rfind("https://", 0) != 0) {
    return InvalidArgument("config.server.http.oauth.resource: must be https:// when the listener is HTTPS "
                           "(server.http.tls)");
  }
  std::unique_ptr<auth::oauth::TokenIntrospector> introspector;
  if (!oc.introspection.client_id.empty()) {
    AIRLOCK_ASSIGN_OR_RETURN(std::string secret, auth::oauth::ReadClientSecret(oc.introspection));
    introspector = std::make_unique<auth::oauth::TokenIntrospector>(
        auth::oauth::IntrospectionOptions(oc, std::move(secret)), auth::oauth::HttpGet,
        auth::oauth::HttpIntrospectionPost, [] {
          return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
        });
  }
  auto oauth = std::make_unique<auth::oauth::OAuthAuthenticator>(oc, auth::oauth::HttpGet, nullptr,
                                                                 auth::oauth::SteadySeconds, std::move(introspector));
  http->oauth_metadata = auth::oauth::ProtectedResourceMetadata(oc).dump();
  http->oauth_challenge = [o = oauth.get()](const std::string& path) { return o->Challenge(path); };
  // Refused tokens need no credential to send: a flood writes at most 30
  // rows a minute, the rest counted in the next row (audit/event_coalescer.h).
  auto refusals = std::make_shared<audit::EventCoalescer>(audit::EventCoalescer::Options{});
  http->oauth = [o = oauth.get(), audit, refusals](std::string_view token, const std::string& path) {
    auth::oauth::AuthDecision d = o->Authenticate(token, path);
    mcp::AuthOutcome out;
    out.caller = d.caller;
    if (d.caller) return out;
    out.status = d.status;
    out.challenge = d.challenge;
    out.message = (d.status == 403 ? "Forbidden: " : d.status == 503 ? "Service Unavailable: " : "Unauthorized: ") +
                  d.message;
    uint64_t suppressed = 0;
    if (audit != nullptr && refusals->Admit(&suppressed)) {
      nlohmann::json detail = {{"status", d.status}, {"reason", d.message}, {"client_id", d.client_id}};
      if (suppressed > 0) detail["suppressed_before"] = suppressed;
      Status st = audit->Event({.kind = "auth_refused", .actor = "oauth", .target = path, .detail = std::move(detail)});
      if (!st.ok()) std::cerr << "airlock: audit: " << st.message() << "\n";
    }
    return out;
  };
  return oauth;
}

}  // namespace airlock::cli
