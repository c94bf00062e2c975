#include "auth/oauth/jwk_set.h"

#include <cjose/jwk.h>

#include <nlohmann/json.hpp>

namespace airlock::auth::oauth {

StatusOr<JwkSet> JwkSet::Parse(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("keys") || !j["keys"].is_array()) {
    return InvalidArgument("JWKS: expected a JSON object with a \"keys\" array");
  }
  JwkSet set;
  for (const nlohmann::json& k : j["keys"]) {
    if (!k.is_object()) continue;
    const std::string kty = k.value("kty", "");
    if (kty != "RSA" && kty != "EC") continue;  // oct (HMAC) is never a public key; OKP: cjose cannot
    if (k.contains("use") && k["use"] != "sig") continue;
    const std::string dumped = k.dump();
    cjose_err err{};
    cjose_jwk_t* raw = cjose_jwk_import(dumped.data(), dumped.size(), &err);
    if (raw == nullptr) continue;  // malformed key: not trusted
    Key key;
    key.jwk = std::shared_ptr<cjose_jwk_t>(raw, [](cjose_jwk_t* p) { cjose_jwk_release(p); });
    key.kty = kty;
    key.kid = k.contains("kid") && k["kid"].is_string() ? k["kid"].get<std::string>() : "";
    key.alg = k.contains("alg") && k["alg"].is_string() ? k["alg"].get<std::string>() : "";
    set.keys_.push_back(std::move(key));
  }
  if (set.keys_.empty()) return InvalidArgument("JWKS: no usable RSA or EC signature key");
  return set;
}

std::vector<const JwkSet::Key*> JwkSet::Candidates(const std::string& kid) const {
  std::vector<const Key*> out;
  for (const Key& k : keys_) {
    if (kid.empty() || k.kid == kid) out.push_back(&k);
  }
  return out;
}

bool JwkSet::HasKid(const std::string& kid) const {
  for (const Key& k : keys_) {
    if (k.kid == kid) return true;
  }
  return false;
}

}  // namespace airlock::auth::oauth
