// Signing keys and tokens made in-test (cjose random keys) for the OAuth
// validator tests: a tiny authorization server without a network.
#ifndef AIRLOCK_TESTS_UNIT_OAUTH_TEST_KEYS_H_
#define AIRLOCK_TESTS_UNIT_OAUTH_TEST_KEYS_H_

#include <cjose/header.h>
#include <cjose/jwk.h>
#include <cjose/jws.h>
#include <openssl/hmac.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/encoding.h"

namespace airlock::auth::oauth::testing {

struct JwkDeleter {
  void operator()(cjose_jwk_t* p) const { cjose_jwk_release(p); }
};
using JwkPtr = std::unique_ptr<cjose_jwk_t, JwkDeleter>;

inline std::string B64Url(std::string_view bytes) {
  std::string s = Base64Encode(bytes);
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

class TestKey {
 public:
  static TestKey Rsa(const std::string& kid) {
    static const uint8_t kE[] = {0x01, 0x00, 0x01};
    return TestKey(JwkPtr(cjose_jwk_create_RSA_random(2048, kE, sizeof kE, nullptr)), kid);
  }
  static TestKey Ec(const std::string& kid) {
    return TestKey(JwkPtr(cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, nullptr)), kid);
  }

  // The public JWK as JSON (with kid).
  nlohmann::json PublicJwk() const {
    char* s = cjose_jwk_to_json(jwk_.get(), false, nullptr);
    nlohmann::json j = nlohmann::json::parse(s);
    std::free(s);
    j["kid"] = kid_;
    j["use"] = "sig";
    return j;
  }

  // A compact JWS of `claims` with header {alg, kid (unless empty), typ}.
  std::string Sign(const nlohmann::json& claims, const std::string& alg, const std::string& kid) const {
    cjose_header_t* h = cjose_header_new(nullptr);
    cjose_header_set(h, CJOSE_HDR_ALG, alg.c_str(), nullptr);
    if (!kid.empty()) cjose_header_set(h, CJOSE_HDR_KID, kid.c_str(), nullptr);
    cjose_header_set(h, "typ", "at+jwt", nullptr);
    const std::string payload = claims.dump();
    cjose_jws_t* jws =
        cjose_jws_sign(jwk_.get(), h, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), nullptr);
    cjose_header_release(h);
    const char* ser = nullptr;
    cjose_jws_export(jws, &ser, nullptr);
    std::string out = ser ? ser : "";
    cjose_jws_release(jws);
    return out;
  }
  std::string Sign(const nlohmann::json& claims, const std::string& alg = "RS256") const {
    return Sign(claims, alg, kid_);
  }

  const std::string& kid() const { return kid_; }

 private:
  TestKey(JwkPtr jwk, std::string kid) : jwk_(std::move(jwk)), kid_(std::move(kid)) {}
  std::shared_ptr<cjose_jwk_t> jwk_;
  std::string kid_;
};

// header.payload.HMAC-SHA256(secret): the "HS256 signed with the public key" attack.
inline std::string SignHs256(const nlohmann::json& header, const nlohmann::json& claims, const std::string& secret) {
  const std::string input = B64Url(header.dump()) + "." + B64Url(claims.dump());
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(input.data()),
       input.size(), mac, &len);
  return input + "." + B64Url(std::string(reinterpret_cast<char*>(mac), len));
}

}  // namespace airlock::auth::oauth::testing

#endif  // AIRLOCK_TESTS_UNIT_OAUTH_TEST_KEYS_H_
