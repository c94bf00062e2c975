#include "codetools/code_tool_store.h"

#include <set>

#include "base/encoding.h"

namespace airlock::codetools {
namespace {

constexpr size_t kMaxCodeBytes = 256 * 1024;
constexpr size_t kMaxDescriptionBytes = 4096;
constexpr size_t kMaxNameBytes = 64;
constexpr size_t kMaxConnectorBytes = 32;
constexpr size_t kMaxToolBytes = 128;

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsLower(c) || IsDigit(c) || (c >= 'A' && c <= 'Z'); }

bool ValidToolName(const std::string& name) {
  if (!IsLower(name[0]) || name.size() > kMaxNameBytes) return false;
  for (char c : name) {
    if (!IsLower(c) && !IsDigit(c) && c != '_') return false;
  }
  return true;
}

bool ValidConnector(const std::string& c) {
  if (c.empty() || c.size() > kMaxConnectorBytes) return false;
  for (char ch : c) {
    if (!IsAlnum(ch) && ch != '_' && ch != '-') return false;
  }
  return true;
}

// The part after "connector.": "*" or an MCP tool name.
bool ValidConnectorTool(const std::string& t) {
  if (t == "*") return true;
  if (t.empty() || t.size() > kMaxToolBytes) return false;
  for (char ch : t) {
    if (!IsAlnum(ch) && ch != '_' && ch != '-' && ch != '.' && ch != '/') return false;
  }
  return true;
}

const std::set<std::string>& LimitKeys() {
  static const std::set<std::string> keys = {"wall_ms",          "max_calls",         "max_concurrent",
                                             "max_args_bytes",   "max_result_bytes",  "max_console_bytes",
                                             "memory_mb"};
  return keys;
}

Status ValidateTools(const Proposal& p) {
  const std::set<std::string> declared(p.connectors.begin(), p.connectors.end());
  for (size_t i = 0; i < p.tools.size(); ++i) {
    const std::string& t = p.tools[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    const size_t dot = t.find('.');
    if (dot == std::string::npos || !ValidConnector(t.substr(0, dot)) || !ValidConnectorTool(t.substr(dot + 1))) {
      return InvalidArgument(where + ": expected \"connector.tool\" or \"connector.*\"");
    }
    if (!declared.count(t.substr(0, dot))) {
      return InvalidArgument(where + ": connector \"" + t.substr(0, dot) + "\" is not among the declared connectors");
    }
  }
  return OkStatus();
}

Status ValidateLimits(const nlohmann::json& limits) {
  if (!limits.is_object()) return InvalidArgument("limits: expected an object");
  for (const auto& [key, value] : limits.items()) {
    if (!LimitKeys().count(key)) {
      return InvalidArgument("limits." + key +
                             ": unknown limit (known: wall_ms, max_calls, max_concurrent, max_args_bytes, "
                             "max_result_bytes, max_console_bytes, memory_mb)");
    }
    const bool positive = value.is_number_unsigned() ? value.get<uint64_t>() > 0
                          : value.is_number_integer() ? value.get<int64_t>() > 0
                                                      : false;
    if (!positive) return InvalidArgument("limits." + key + ": expected a positive integer");
  }
  return OkStatus();
}

}  // namespace

const char* StateName(State s) {
  switch (s) {
    case State::kProposed:
      return "proposed";
    case State::kApproved:
      return "approved";
    case State::kRejected:
      return "rejected";
    case State::kRevoked:
      return "revoked";
    case State::kSuperseded:
      return "superseded";
  }
  return "unknown";
}

std::string HashOf(const Proposal& p) {
  nlohmann::json j = nlohmann::json::object();  // std::map: keys sorted
  j["language"] = p.language;
  j["code"] = p.code;
  j["input_schema"] = p.input_schema;
  j["connectors"] = p.connectors;
  j["tools"] = p.tools;
  j["limits"] = p.limits;
  try {
    return Sha256Hex(j.dump());
  } catch (const nlohmann::json::exception&) {  // ill-formed UTF-8
    return "";
  }
}

Status ValidateProposal(const Proposal& p) {
  if (p.name.empty() || !ValidToolName(p.name)) {
    return InvalidArgument("name: expected 1-64 characters of [a-z0-9_] starting with a letter");
  }
  if (p.description.size() > kMaxDescriptionBytes) {
    return InvalidArgument("description: longer than " + std::to_string(kMaxDescriptionBytes) + " bytes");
  }
  if (!IsValidUtf8(p.description)) return InvalidArgument("description: not valid UTF-8");
  if (p.language != "javascript" && p.language != "python") {
    return InvalidArgument("language: expected \"javascript\" or \"python\"");
  }
  if (p.code.empty()) return InvalidArgument("code: empty");
  if (p.code.size() > kMaxCodeBytes) {
    return InvalidArgument("code: longer than " + std::to_string(kMaxCodeBytes) + " bytes");
  }
  if (!IsValidUtf8(p.code)) return InvalidArgument("code: not valid UTF-8");
  if (!p.input_schema.is_object() || !p.input_schema.contains("type") || p.input_schema["type"] != "object") {
    return InvalidArgument("input_schema: expected a JSON Schema object with \"type\": \"object\"");
  }
  try {
    (void)p.input_schema.dump();
  } catch (const nlohmann::json::exception&) {
    return InvalidArgument("input_schema: not valid UTF-8");
  }
  if (p.connectors.empty()) return InvalidArgument("connectors: at least one connector is required");
  for (size_t i = 0; i < p.connectors.size(); ++i) {
    if (!ValidConnector(p.connectors[i])) {
      return InvalidArgument("connectors[" + std::to_string(i) + "]: expected 1-32 characters of [A-Za-z0-9_-]");
    }
  }
  AIRLOCK_RETURN_IF_ERROR(ValidateTools(p));
  return ValidateLimits(p.limits);
}

}  // namespace airlock::codetools
