#include "gateway/connector_config.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <limits>

namespace airlock::gateway {
namespace {

using nlohmann::json;

const std::set<std::string> kKnownKeys = {
    "type",    "command", "args",       "env",  "cwd",   "stderr",
    "url",     "headers", "trusted",    "read_only_tools", "timeout_ms", "enabled", "protocol"};

Status ExpectString(const json& v, const std::string& path, std::string* out) {
  if (!v.is_string()) return InvalidArgument(path + ": expected a string");
  *out = v.get<std::string>();
  return OkStatus();
}

Status ExpectBool(const json& v, const std::string& path, bool* out) {
  if (!v.is_boolean()) return InvalidArgument(path + ": expected true or false");
  *out = v.get<bool>();
  return OkStatus();
}

Status ExpectStringList(const json& v, const std::string& path, std::vector<std::string>* out) {
  if (!v.is_array()) return InvalidArgument(path + ": expected an array of strings");
  out->clear();
  for (size_t i = 0; i < v.size(); ++i) {
    std::string s;
    AIRLOCK_RETURN_IF_ERROR(ExpectString(v[i], path + "[" + std::to_string(i) + "]", &s));
    out->push_back(std::move(s));
  }
  return OkStatus();
}

// An object of string values. Keys appear in errors, values never do.
Status ExpectStringMap(const json& v, const std::string& path,
                       std::map<std::string, std::string>* out) {
  if (!v.is_object()) return InvalidArgument(path + ": expected an object of strings");
  out->clear();
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) return InvalidArgument(path + "." + key + ": expected a string");
    (*out)[key] = value.get<std::string>();
  }
  return OkStatus();
}

bool IsValidEnvName(const std::string& name) {
  if (name.empty() || name.find('=') != std::string::npos) return false;
  return name.find('\0') == std::string::npos;
}

// RFC 7230 token characters.
bool IsValidHeaderName(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (std::isalnum(c)) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

bool HasControlChars(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

}  // namespace

bool IsValidConnectorName(const std::string& name) {
  if (name.empty() || name.size() > kMaxConnectorNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

StatusOr<ConnectorConfig> ParseConnectorConfig(const std::string& name, const json& j) {
  const std::string base = "mcpServers." + name;
  if (!IsValidConnectorName(name)) {
    return InvalidArgument(base + ": connector names must match [A-Za-z0-9_-]{1,32}");
  }
  if (!j.is_object()) return InvalidArgument(base + ": expected an object");
  for (const auto& [key, value] : j.items()) {
    if (!kKnownKeys.count(key)) return InvalidArgument(base + ": unknown key \"" + key + "\"");
  }
  ConnectorConfig c;
  c.name = name;
  const bool has_command = j.contains("command");
  const bool has_url = j.contains("url");
  if (has_command == has_url) {
    return InvalidArgument(base + ": exactly one of \"command\" (stdio) or \"url\" (HTTP) is required");
  }
  c.transport = has_command ? TransportKind::kStdio : TransportKind::kHttp;
  if (j.contains("type")) {
    std::string type;
    AIRLOCK_RETURN_IF_ERROR(ExpectString(j["type"], base + ".type", &type));
    const bool http_type = type == "http" || type == "streamable-http" || type == "streamableHttp";
    if (type != "stdio" && !http_type) {
      return InvalidArgument(base + ".type: expected \"stdio\", \"http\" or \"streamable-http\"");
    }
    if (http_type != (c.transport == TransportKind::kHttp)) {
      return InvalidArgument(base + ".type: \"" + type + "\" does not match the " +
                             (has_command ? "\"command\"" : "\"url\"") + " key");
    }
  }
  // Keys of the other transport are mistakes, not extras.
  for (const char* key : has_command ? std::vector<const char*>{"headers"}
                                     : std::vector<const char*>{"args", "env", "cwd", "stderr"}) {
    if (j.contains(key)) {
      return InvalidArgument(base + "." + key + ": not allowed for a " +
                             (has_command ? "stdio" : "HTTP") + " connector");
    }
  }

  if (has_command) {
    AIRLOCK_RETURN_IF_ERROR(ExpectString(j["command"], base + ".command", &c.command));
    if (c.command.empty() || c.command.find('\0') != std::string::npos) {
      return InvalidArgument(base + ".command: must be a non-empty string");
    }
    if (j.contains("args")) {
      AIRLOCK_RETURN_IF_ERROR(ExpectStringList(j["args"], base + ".args", &c.args));
    }
    if (j.contains("env")) {
      AIRLOCK_RETURN_IF_ERROR(ExpectStringMap(j["env"], base + ".env", &c.env));
      for (const auto& [key, value] : c.env) {
        if (!IsValidEnvName(key)) return InvalidArgument(base + ".env: invalid variable name");
        if (value.find('\0') != std::string::npos) {
          return InvalidArgument(base + ".env." + key + ": contains a NUL byte");
        }
      }
    }
    if (j.contains("cwd")) AIRLOCK_RETURN_IF_ERROR(ExpectString(j["cwd"], base + ".cwd", &c.cwd));
    if (j.contains("stderr")) {
      std::string mode;
      AIRLOCK_RETURN_IF_ERROR(ExpectString(j["stderr"], base + ".stderr", &mode));
      if (mode == "inherit") {
        c.stderr_mode = StderrMode::kInherit;
      } else if (mode == "discard") {
        c.stderr_mode = StderrMode::kDiscard;
      } else {
        return InvalidArgument(base + ".stderr: expected \"inherit\" or \"discard\"");
      }
    }
  } else {
    AIRLOCK_RETURN_IF_ERROR(ExpectString(j["url"], base + ".url", &c.url));
    if (c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0) {
      return InvalidArgument(base + ".url: expected an http:// or https:// URL");
    }
    if (HasControlChars(c.url)) return InvalidArgument(base + ".url: contains control characters");
    if (j.contains("headers")) {
      AIRLOCK_RETURN_IF_ERROR(ExpectStringMap(j["headers"], base + ".headers", &c.headers));
      for (const auto& [key, value] : c.headers) {
        if (!IsValidHeaderName(key)) {
          return InvalidArgument(base + ".headers: invalid header name \"" + key + "\"");
        }
        if (HasControlChars(value)) {
          return InvalidArgument(base + ".headers." + key + ": contains control characters");
        }
      }
    }
  }

  if (j.contains("trusted")) AIRLOCK_RETURN_IF_ERROR(ExpectBool(j["trusted"], base + ".trusted", &c.trusted));
  if (j.contains("enabled")) AIRLOCK_RETURN_IF_ERROR(ExpectBool(j["enabled"], base + ".enabled", &c.enabled));
  if (j.contains("read_only_tools")) {
    std::vector<std::string> pins;
    AIRLOCK_RETURN_IF_ERROR(ExpectStringList(j["read_only_tools"], base + ".read_only_tools", &pins));
    c.read_only_tools.insert(pins.begin(), pins.end());
  }
  if (j.contains("protocol")) {
    std::string era;
    AIRLOCK_RETURN_IF_ERROR(ExpectString(j["protocol"], base + ".protocol", &era));
    if (era == "auto") {
      c.protocol = ProtocolEra::kAuto;
    } else if (era == "legacy") {
      c.protocol = ProtocolEra::kLegacy;
    } else if (era == "modern") {
      c.protocol = ProtocolEra::kModern;
    } else {
      return InvalidArgument(base + ".protocol: expected \"auto\", \"legacy\" or \"modern\"");
    }
  }
  if (j.contains("timeout_ms")) {
    const json& v = j["timeout_ms"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 3600000) {
      return InvalidArgument(base + ".timeout_ms: expected an integer in [1, 3600000]");
    }
    c.timeout_ms = v.get<uint64_t>();
  }
  return c;
}

StatusOr<std::vector<ConnectorConfig>> ParseMcpServers(const json& mcp_servers) {
  std::vector<ConnectorConfig> out;
  if (mcp_servers.is_null()) return out;
  if (!mcp_servers.is_object()) return InvalidArgument("mcpServers: expected an object");
  for (const auto& [name, value] : mcp_servers.items()) {
    AIRLOCK_ASSIGN_OR_RETURN(ConnectorConfig c, ParseConnectorConfig(name, value));
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const ConnectorConfig& a, const ConnectorConfig& b) { return a.name < b.name; });
  return out;
}

std::string RedactedTarget(const ConnectorConfig& config) {
  if (config.transport == TransportKind::kStdio) {
    const size_t slash = config.command.rfind('/');
    return "stdio: " + (slash == std::string::npos ? config.command : config.command.substr(slash + 1));
  }
  const size_t scheme_end = config.url.find("://");
  std::string rest = config.url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  const size_t at = rest.rfind('@');
  if (at != std::string::npos) rest = rest.substr(at + 1);
  return "http: " + config.url.substr(0, scheme_end + 3) + rest;
}

}  // namespace airlock::gateway
