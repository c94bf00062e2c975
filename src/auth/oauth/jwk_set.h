// A JSON Web Key Set (RFC 7517) imported with cjose: the signing keys an
// authorization server publishes at its jwks_uri. Immutable once parsed;
// shared between requests by shared_ptr.
//
//   AIRLOCK_ASSIGN_OR_RETURN(JwkSet set, JwkSet::Parse(body));
//   for (const JwkSet::Key* k : set.Candidates("key-1")) ...
#ifndef AIRLOCK_AUTH_OAUTH_JWK_SET_H_
#define AIRLOCK_AUTH_OAUTH_JWK_SET_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

struct _cjose_jwk_int;  // cjose_jwk_t

namespace airlock::auth::oauth {

class JwkSet {
 public:
  struct Key {
    std::string kid;  // "" when the key has none
    std::string kty;  // "RSA" | "EC"
    std::string alg;  // the key's "alg", "" when unrestricted
    std::shared_ptr<_cjose_jwk_int> jwk;  // released by cjose_jwk_release
  };

  // `json` is {"keys": [...]}. Keys that are not signature keys ("use" other
  // than "sig") or of a type cjose cannot verify with (oct, OKP, ...) are
  // skipped, never trusted; a set with no usable key is an error.
  static StatusOr<JwkSet> Parse(const std::string& json);

  // The keys that may have signed a token with header `kid` (all keys when
  // the token names none).
  std::vector<const Key*> Candidates(const std::string& kid) const;
  bool HasKid(const std::string& kid) const;
  size_t size() const { return keys_.size(); }

 private:
  std::vector<Key> keys_;
};

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_JWK_SET_H_
