#include "gateway/modern_headers.h"

#include "base/encoding.h"
#include "protocol/mcp_eras.h"

namespace airlock::gateway {

using nlohmann::json;

std::string EncodeHeaderValue(std::string_view value) {
  bool safe = value.empty() || (value.front() != ' ' && value.front() != '\t' && value.back() != ' ' &&
                                value.back() != '\t');
  for (unsigned char c : value) {
    if (!(c == ' ' || c == '\t' || (c >= 0x21 && c <= 0x7e))) safe = false;
  }
  const bool sentinel = value.size() >= 11 && value.substr(0, 9) == "=?base64?" && value.substr(value.size() - 2) == "?=";
  if (safe && !sentinel) return std::string(value);
  return "=?base64?" + Base64Encode(value) + "?=";
}

std::vector<std::pair<std::string, std::string>> ModernRequestHeaders(const json& message) {
  std::vector<std::pair<std::string, std::string>> h;
  if (!message.is_object() || !message.contains("params") || !message["params"].is_object()) return h;
  const json& params = message["params"];
  if (!params.contains("_meta") || !params["_meta"].is_object()) return h;
  const json& meta = params["_meta"];
  if (!meta.contains(protocol::kMetaProtocolVersion) || !meta[protocol::kMetaProtocolVersion].is_string()) return h;
  h.emplace_back(protocol::kHeaderProtocolVersion,
                 EncodeHeaderValue(meta[protocol::kMetaProtocolVersion].get<std::string>()));
  if (!message.contains("method") || !message["method"].is_string()) return h;
  const std::string method = message["method"].get<std::string>();
  h.emplace_back(protocol::kHeaderMethod, EncodeHeaderValue(method));
  const char* name_field = method == "tools/call" || method == "prompts/get" ? "name"
                           : method == "resources/read"                    ? "uri"
                                                                           : nullptr;
  if (name_field != nullptr && params.contains(name_field) && params[name_field].is_string()) {
    h.emplace_back(protocol::kHeaderName, EncodeHeaderValue(params[name_field].get<std::string>()));
  }
  return h;
}

}  // namespace airlock::gateway
