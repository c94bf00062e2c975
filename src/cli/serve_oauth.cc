#include "cli/serve_oauth.h"

#include <iostream>

#include "audit/event_coalescer.h"
#include "auth/oauth/http_fetch.h"
#include "auth/oauth/resource_metadata.h"
#include "mcp/http_security.h"

namespace airlock::cli {

StatusOr<std::unique_ptr<auth::oauth::OAuthAuthenticator>> InstallOAuth(const config::Config& cfg,
                                                                         mcp::HttpOptions* http,
                                                                         audit::AuditLog* audit) {
  const config::OAuthConfig& oc = cfg.server.http.oauth;
  if (oc.issuer.empty()) return std::unique_ptr<auth::oauth::OAuthAuthenticator>();
  AIRLOCK_RETURN_IF_ERROR(auth::oauth::CheckOAuthConfig(oc, mcp::IsLoopbackName(http->host)));
  auto oauth = std::make_unique<auth::oauth::OAuthAuthenticator>(oc, auth::oauth::HttpGet);
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
    out.message = (d.status == 403 ? "Forbidden: " : "Unauthorized: ") + d.message;
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
