// Console single sign-on with OpenID Connect (issue 31, docs/console.md):
// the authorization code flow with PKCE (S256), `state` and `nonce` for
// the operators' console.
//
//   Begin()     the provider's authorization URL for a new pending login
//               (sso_login_store.h); its binding goes into a pre-login cookie
//   Complete()  the callback: the state is taken (single use, same browser,
//               not expired), the RFC 9207 `iss` parameter checked (required
//               when the provider advertises
//               authorization_response_iss_parameter_supported), the code
//               exchanged at the token endpoint with client_secret_basic
//               (bounded, http_fetch.h), and the ID token validated with the
//               resource server's JWT code (jwt_validator.h: signature by a
//               key of the provider's JWKS, allowlisted algorithm, iss, aud =
//               client_id, exp/iat/nbf with clock skew) plus nonce and azp.
//               The result says who signed in, whether the configured claim
//               makes them an administrator, and until when (the ID token's exp).
//
// The provider's endpoints come from its OpenID discovery document (RFC
// 8414 metadata first), fetched on first use and kept once found. Nothing
// here logs or returns a code or a token. Thread-safe.
#ifndef AIRLOCK_CONSOLE_OIDC_SSO_H_
#define AIRLOCK_CONSOLE_OIDC_SSO_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "auth/oauth/jwks_cache.h"
#include "base/status.h"
#include "config/config.h"
#include "console/sso_login_store.h"

namespace airlock::console {

// What the console needs of the provider's discovery document.
struct OidcProviderMetadata {
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string jwks_uri;
  bool iss_parameter_supported = false;  // RFC 9207
};

// Parses a discovery document; its "issuer" must equal `issuer` exactly.
StatusOr<OidcProviderMetadata> ParseProviderMetadata(std::string_view body, const std::string& issuer);

// The query of the provider's redirect to the callback.
struct SsoCallback {
  std::string state;
  std::string code;
  std::string iss;                // RFC 9207; may be empty
  std::string error;              // e.g. "access_denied"
  std::string error_description;  // the provider's words (shown, not trusted)
};

// Who signed in.
struct SsoUser {
  std::string subject;
  std::string user;          // "oidc:<sub>@<issuer host>"
  std::string display_name;  // "name", else "preferred_username", else "email", else sub
  bool admin = false;        // the admin claim holds one of the admin values
  int64_t expires_unix = 0;  // the ID token's exp
};

class OidcSso {
 public:
  // POST of a form with an Authorization header (http_fetch.h's HttpPostForm).
  using Poster =
      std::function<StatusOr<std::string>(const std::string& url, const std::string& form, const std::string& auth)>;
  struct Deps {
    auth::oauth::Fetcher get;                  // discovery and JWKS
    Poster post;                               // the token endpoint
    std::function<int64_t()> now_unix;         // default: the system clock
    SsoLoginStore::Options logins;             // pending logins (ttl)
  };
  // `client_secret` is the content of config.client_secret_file;
  // `redirect_uri` the resolved one (config or derived).
  OidcSso(config::ConsoleSsoConfig config, std::string client_secret, std::string redirect_uri, Deps deps);

  // The authorization URL to send the browser to, and the login (whose
  // `binding` the caller puts into the pre-login cookie).
  struct Started {
    std::string url;
    PendingLogin login;
  };
  StatusOr<Started> Begin();

  // The callback. PermissionDenied / NotFound / DeadlineExceeded /
  // InvalidArgument with a message fit to show; Unavailable when the
  // provider could not be reached. A non-admin user is a success with
  // admin = false (the caller refuses them).
  StatusOr<SsoUser> Complete(const SsoCallback& callback, std::string_view binding);

  // Validates an ID token for `nonce` (public for tests).
  StatusOr<SsoUser> ValidateIdToken(std::string_view id_token, std::string_view nonce);

  const std::string& provider_name() const { return provider_name_; }
  const config::ConsoleSsoConfig& config() const { return config_; }
  SsoLoginStore& logins() { return logins_; }

 private:
  StatusOr<OidcProviderMetadata> Metadata();
  int64_t NowUnix() const;

  const config::ConsoleSsoConfig config_;
  const std::string client_secret_;
  const std::string redirect_uri_;
  const Deps deps_;
  std::string provider_name_;
  SsoLoginStore logins_;
  std::mutex mu_;
  std::optional<OidcProviderMetadata> metadata_;  // guarded by mu_
  std::unique_ptr<auth::oauth::JwksCache> jwks_;  // guarded by mu_; made with the metadata
};

// "oidc:<sub>@<issuer host>" (the same reduction as OAuth users).
std::string OidcUser(const std::string& issuer, const std::string& subject);

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_OIDC_SSO_H_
