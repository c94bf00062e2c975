#include "auth/oauth/jwt_validator.h"

#include <cjose/header.h>
#include <cjose/jwk.h>
#include <cjose/jws.h>

#include <algorithm>
#include <memory>
#include <set>


namespace airlock::auth::oauth {
namespace {

using nlohmann::json;

struct JwsDeleter {
  void operator()(cjose_jws_t* p) const { cjose_jws_release(p); }
};
using JwsPtr = std::unique_ptr<cjose_jws_t, JwsDeleter>;

// Asymmetric algorithms only: HMAC with a published key would let anyone
// sign, and "none" is no signature.
const std::set<std::string>& AllowedAlgorithms() {
  static const std::set<std::string> kAllowed = {"RS256", "RS384", "RS512", "PS256", "PS384",
                                                 "PS512", "ES256", "ES384", "ES512"};
  return kAllowed;
}

std::string KeyTypeFor(const std::string& alg) { return alg[0] == 'E' ? "EC" : "RSA"; }

bool IsB64Url(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

std::string HeaderString(cjose_header_t* h, const char* name) {
  cjose_err err{};
  const char* v = cjose_header_get(h, name, &err);
  return v ? v : "";
}

bool ReadTime(const json& c, const char* name, bool required, int64_t* out, std::string* error) {
  if (!c.contains(name)) {
    if (required) *error = std::string("token has no \"") + name + "\" claim";
    return !required;
  }
  if (!c[name].is_number()) {
    *error = std::string("token claim \"") + name + "\" is not a number";
    return false;
  }
  *out = static_cast<int64_t>(c[name].get<double>());
  return true;
}

}  // namespace

bool LooksLikeJwt(std::string_view token) {
  size_t a = token.find('.');
  if (a == std::string_view::npos) return false;
  size_t b = token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) return false;
  return a > 0 && b > a + 1 && IsB64Url(token.substr(0, a)) && IsB64Url(token.substr(a + 1, b - a - 1)) &&
         IsB64Url(token.substr(b + 1));
}

std::string TokenKeyId(std::string_view token) {
  if (!LooksLikeJwt(token) || token.size() > 64 * 1024) return "";
  cjose_err err{};
  JwsPtr jws(cjose_jws_import(token.data(), token.size(), &err));
  if (!jws) return "";
  return HeaderString(cjose_jws_get_protected(jws.get()), CJOSE_HDR_KID);
}

StatusOr<TokenClaims> ValidateJwt(std::string_view token, const JwkSet& keys, const TokenExpectations& expect,
                                  int64_t now) {
  if (token.size() > expect.max_token_bytes) {
    return InvalidArgument("token is larger than " + std::to_string(expect.max_token_bytes) + " bytes");
  }
  if (!LooksLikeJwt(token)) return InvalidArgument("token is not a JWT");
  cjose_err err{};
  JwsPtr jws(cjose_jws_import(token.data(), token.size(), &err));
  if (!jws) return InvalidArgument("token is not a valid JWS");
  cjose_header_t* header = cjose_jws_get_protected(jws.get());
  const std::string alg = HeaderString(header, CJOSE_HDR_ALG);
  if (!AllowedAlgorithms().count(alg)) {
    return InvalidArgument("token algorithm \"" + alg.substr(0, 16) + "\" is not accepted");
  }
  const std::string kid = HeaderString(header, CJOSE_HDR_KID);
  std::vector<const JwkSet::Key*> candidates = keys.Candidates(kid);
  if (candidates.empty()) return NotFound("token signing key \"" + kid.substr(0, 64) + "\" is unknown");
  bool verified = false;
  for (const JwkSet::Key* k : candidates) {
    if (k->kty != KeyTypeFor(alg)) continue;
    if (!k->alg.empty() && k->alg != alg) continue;
    cjose_err verr{};
    if (cjose_jws_verify(jws.get(), k->jwk.get(), &verr)) {
      verified = true;
      break;
    }
  }
  if (!verified) return InvalidArgument("token signature is invalid");

  uint8_t* plain = nullptr;
  size_t plain_len = 0;
  if (!cjose_jws_get_plaintext(jws.get(), &plain, &plain_len, &err)) return InvalidArgument("token has no payload");
  json c = json::parse(std::string_view(reinterpret_cast<const char*>(plain), plain_len), nullptr, false);
  if (!c.is_object()) return InvalidArgument("token payload is not a JSON object");

  TokenClaims out;
  if (!c.contains("iss") || !c["iss"].is_string() || c["iss"].get<std::string>() != expect.issuer) {
    return InvalidArgument("token issuer is not " + expect.issuer);
  }
  out.issuer = c["iss"].get<std::string>();
  bool audience_ok = false;
  if (c.contains("aud")) {
    const json& aud = c["aud"];
    if (aud.is_string()) audience_ok = aud.get<std::string>() == expect.resource;
    if (aud.is_array()) {
      for (const json& a : aud) audience_ok = audience_ok || (a.is_string() && a.get<std::string>() == expect.resource);
    }
  }
  if (!audience_ok) return InvalidArgument("token audience does not include " + expect.resource);
  std::string error;
  int64_t exp = 0, nbf = 0, iat = 0;
  if (!ReadTime(c, "exp", true, &exp, &error) || !ReadTime(c, "nbf", false, &nbf, &error) ||
      !ReadTime(c, "iat", false, &iat, &error)) {
    return InvalidArgument(error);
  }
  if (now >= exp + expect.clock_skew_s) return InvalidArgument("token expired");
  if (c.contains("nbf") && nbf > now + expect.clock_skew_s) return InvalidArgument("token is not yet valid");
  if (c.contains("iat") && iat > now + expect.clock_skew_s) return InvalidArgument("token was issued in the future");
  if (!c.contains("sub") || !c["sub"].is_string() || c["sub"].get<std::string>().empty()) {
    return InvalidArgument("token has no subject");
  }
  out.subject = c["sub"].get<std::string>();
  for (const char* name : {"client_id", "azp"}) {
    if (out.client_id.empty() && c.contains(name) && c[name].is_string()) out.client_id = c[name].get<std::string>();
  }
  if (c.contains("scope") && c["scope"].is_string()) {
    out.scopes = SplitScopes(c["scope"].get<std::string>());
  } else if (c.contains("scp") && c["scp"].is_array()) {
    for (const json& s : c["scp"]) {
      if (s.is_string()) out.scopes.push_back(s.get<std::string>());
    }
  } else if (c.contains("scp") && c["scp"].is_string()) {
    out.scopes = SplitScopes(c["scp"].get<std::string>());
  }
  out.claims = std::move(c);
  return out;
}

std::vector<std::string> SplitScopes(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace airlock::auth::oauth
