// Pending console single sign-on logins (issue 31, docs/console.md): what
// the console remembers between sending a browser to the OpenID provider
// and the provider sending it back to the callback.
//
// Begin() makes three random values: `state` (names the login in the
// redirect), `nonce` (must come back inside the ID token) and the PKCE
// code verifier (RFC 7636, S256), plus a `binding` value that goes into a
// short-lived pre-login cookie of the browser that started the login. The
// callback's Take() returns the login only when the state is known, not
// expired, and presented by the same browser (its binding cookie); the
// entry is removed on the first Take(), whatever its outcome, so a state
// is used once. Thread-safe; the clock is injectable for tests.
//
//   SsoLoginStore store({.ttl = std::chrono::minutes(5)});
//   StatusOr<PendingLogin> p = store.Begin();        // p->state, p->nonce, p->code_verifier, p->binding
//   StatusOr<PendingLogin> back = store.Take(state_param, binding_cookie);
#ifndef AIRLOCK_CONSOLE_SSO_LOGIN_STORE_H_
#define AIRLOCK_CONSOLE_SSO_LOGIN_STORE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace airlock::console {

struct PendingLogin {
  std::string state;          // 128 random bits, hex
  std::string nonce;          // 128 random bits, hex
  std::string code_verifier;  // 256 random bits, hex (64 characters, RFC 7636's alphabet)
  std::string binding;        // 128 random bits, hex: the pre-login cookie's value
  int64_t expires_ms = 0;
  uint64_t order = 0;  // the store's begin order (the oldest go first past max_pending)
};

// RFC 7636 S256: BASE64URL(SHA-256(ASCII(code_verifier))), unpadded.
std::string PkceChallenge(std::string_view code_verifier);

class SsoLoginStore {
 public:
  struct Options {
    std::chrono::seconds ttl{300};
    size_t max_pending = 1024;  // the oldest go first past it (a flood of logins cannot grow memory)
    std::function<int64_t()> now_ms;  // default: the system clock
  };
  explicit SsoLoginStore(Options options);

  StatusOr<PendingLogin> Begin();
  // The login named by `state`, removed from the store. NotFound when the
  // state is unknown or already used; DeadlineExceeded when it expired;
  // PermissionDenied when `binding` is not the pre-login cookie of the
  // browser that began it (the login is gone either way).
  StatusOr<PendingLogin> Take(std::string_view state, std::string_view binding);
  size_t size();

 private:
  int64_t Now() const;

  const Options options_;
  std::mutex mu_;
  std::map<std::string, PendingLogin, std::less<>> pending_;  // by state; guarded by mu_
  uint64_t next_order_ = 0;                                   // guarded by mu_
};

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_SSO_LOGIN_STORE_H_
