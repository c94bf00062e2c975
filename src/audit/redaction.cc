#include "audit/redaction.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>

#include "base/encoding.h"

namespace airlock::audit {
namespace {

constexpr std::array<std::string_view, 12> kSecretWords = {
    "password", "passwd", "secret", "token", "api_key", "api-key", "apikey",
    "authorization", "auth", "cookie", "private_key", "credential"};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool LooksLikeAuthHeader(const std::string& s) {
  const std::string head = Lower(std::string_view(s).substr(0, 7));
  return head.rfind("bearer ", 0) == 0 || head.rfind("basic ", 0) == 0;
}

nlohmann::json Redact(const nlohmann::json& v, int depth) {
  if (depth > kRedactMaxDepth) return "[too deep]";
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = v.begin(); it != v.end(); ++it) {
      out[it.key()] = IsSecretKey(it.key()) ? nlohmann::json("[redacted]") : Redact(it.value(), depth + 1);
    }
    return out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& e : v) out.push_back(Redact(e, depth + 1));
    return out;
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (LooksLikeAuthHeader(s)) return "[redacted]";
    if (s.size() > kRedactMaxStringBytes) {
      return std::string(TruncateUtf8(s, kRedactMaxStringBytes)) + "\u2026[" +
             std::to_string(s.size()) + " bytes]";
    }
  }
  return v;
}

}  // namespace

bool IsSecretKey(const std::string& key) {
  const std::string k = Lower(key);
  return std::any_of(kSecretWords.begin(), kSecretWords.end(),
                     [&](std::string_view w) { return k.find(w) != std::string::npos; });
}

nlohmann::json RedactArgs(const nlohmann::json& args, size_t max_bytes) {
  nlohmann::json out = Redact(args, 0);
  const size_t bytes = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
  if (bytes > max_bytes) return {{"_truncated", true}, {"_bytes", bytes}};
  return out;
}

}  // namespace airlock::audit
