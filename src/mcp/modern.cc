#include "mcp/modern.h"

#include "base/encoding.h"
#include "mcp/session.h"

namespace airlock::mcp::modern {
namespace {

using nlohmann::json;

constexpr const char* kMetaTraceparent = "traceparent";
constexpr const char* kMetaTracestate = "tracestate";

std::string Clip(const std::string& s, size_t n) { return SanitizeUtf8(s.substr(0, n)); }

Error InvalidMeta(const std::string& message) {
  return Error{.code = protocol::jsonrpc::kInvalidParams, .message = message, .http_status = 400};
}

}  // namespace

bool IsModernVersion(const std::string& version) {
  for (const char* v : kModernVersions) {
    if (version == v) return true;
  }
  return false;
}

json SupportedVersions() {
  json out = json::array();
  for (const char* v : kModernVersions) out.push_back(v);
  for (const char* v : kSupportedProtocolVersions) out.push_back(v);
  return out;
}

bool LooksModern(const protocol::jsonrpc::Message& m) {
  if (m.method == "server/discover") return true;
  return m.params.is_object() && m.params.contains("_meta") && m.params["_meta"].is_object() &&
         m.params["_meta"].contains(kMetaProtocolVersion);
}

std::variant<RequestMeta, Error> ReadRequestMeta(const json& params) {
  if (!params.is_object() || !params.contains("_meta")) {
    return InvalidMeta(std::string("params._meta: required (with ") + kMetaProtocolVersion + " and " +
                       kMetaClientCapabilities + ")");
  }
  const json& meta = params["_meta"];
  if (!meta.is_object()) return InvalidMeta("params._meta: expected object");
  RequestMeta out;
  auto version = meta.find(kMetaProtocolVersion);
  if (version == meta.end() || !version->is_string()) {
    return InvalidMeta(std::string("params._meta[\"") + kMetaProtocolVersion + "\"]: required string");
  }
  out.protocol_version = version->get<std::string>();
  if (!IsModernVersion(out.protocol_version)) return UnsupportedVersion(out.protocol_version);
  auto caps = meta.find(kMetaClientCapabilities);
  if (caps == meta.end() || !caps->is_object()) {
    return InvalidMeta(std::string("params._meta[\"") + kMetaClientCapabilities + "\"]: required object");
  }
  out.client_capabilities = *caps;
  if (auto info = meta.find(kMetaClientInfo); info != meta.end()) {
    if (!info->is_object()) return InvalidMeta(std::string("params._meta[\"") + kMetaClientInfo + "\"]: expected object");
    auto text = [&](const char* key) {
      auto it = info->find(key);
      return it != info->end() && it->is_string() ? Clip(it->get<std::string>(), 64) : std::string();
    };
    out.client = text("name") + (text("version").empty() ? "" : "/" + text("version"));
  }
  if (auto level = meta.find(kMetaLogLevel); level != meta.end()) {
    std::optional<LogLevel> parsed = level->is_string() ? LogLevelFromName(level->get<std::string>()) : std::nullopt;
    if (!parsed) {
      return InvalidMeta(std::string("params._meta[\"") + kMetaLogLevel +
                         "\"]: expected one of debug, info, notice, warning, error, critical, alert, emergency");
    }
    out.log_level = parsed;
  }
  if (auto token = meta.find("progressToken"); token != meta.end()) {
    if (!token->is_string() && !token->is_number_integer()) {
      return InvalidMeta("params._meta.progressToken: expected string or integer");
    }
    out.progress_token = *token;
  }
  // Trace context is advisory: kept when it is a sane string, else dropped.
  auto trace = [&](const char* key) {
    auto it = meta.find(key);
    return it != meta.end() && it->is_string() ? Clip(it->get<std::string>(), 512) : std::string();
  };
  out.traceparent = trace(kMetaTraceparent);
  out.tracestate = trace(kMetaTracestate);
  return out;
}

Error UnsupportedVersion(const std::string& requested) {
  return Error{.code = kUnsupportedProtocolVersion,
               .message = "Unsupported protocol version",
               .data = {{"supported", SupportedVersions()}, {"requested", Clip(requested, 64)}},
               .http_status = 400};
}

json TransportError(const json& id, int http_status, const std::string& message) {
  const int code = http_status >= 500 ? protocol::jsonrpc::kInternalError : protocol::jsonrpc::kInvalidRequest;
  return MakeError(id, code, message, {{"httpStatus", http_status}});
}

json MakeError(const json& id, const Error& error) { return MakeError(id, error.code, error.message, error.data); }

json MakeError(const json& id, int code, const std::string& message, const json& data) {
  return ModernizeError(protocol::jsonrpc::MakeError(id, code, message, data));
}

json ModernizeError(json response) {
  if (response.contains("id") && response["id"].is_null()) response.erase("id");
  return response;
}

json CompleteResult(const json& id, json result) {
  if (!result.is_object()) result = json::object();
  result["resultType"] = "complete";
  json& meta = result["_meta"];
  if (!meta.is_object()) meta = json::object();
  meta[kMetaServerInfo] = {{"name", "airlock"}, {"title", "Airlock"}, {"version", AIRLOCK_VERSION}};
  return protocol::jsonrpc::MakeResult(id, std::move(result));
}

void AddCacheHints(json& response, int64_t ttl_ms, const char* scope) {
  if (!response.contains("result") || !response["result"].is_object()) return;
  response["result"]["ttlMs"] = ttl_ms < 0 ? 0 : ttl_ms;
  response["result"]["cacheScope"] = scope;
}

std::optional<std::string> DecodeHeaderValue(const std::string& value) {
  static constexpr std::string_view kPrefix = "=?base64?";
  static constexpr std::string_view kSuffix = "?=";
  if (value.size() >= kPrefix.size() + kSuffix.size() && value.compare(0, kPrefix.size(), kPrefix) == 0 &&
      value.compare(value.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
    std::string decoded;
    std::string_view body(value);
    body = body.substr(kPrefix.size(), body.size() - kPrefix.size() - kSuffix.size());
    if (!Base64Decode(body, &decoded)) return std::nullopt;
    return decoded;
  }
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (!(u == '\t' || (u >= 0x20 && u <= 0x7e))) return std::nullopt;
  }
  return value;
}

std::optional<Error> CheckHttpHeaders(const HeaderLookup& header, const protocol::jsonrpc::Message& m) {
  auto mismatch = [](const std::string& message) {
    return Error{.code = kHeaderMismatch, .message = "Header mismatch: " + message, .http_status = 400};
  };
  std::optional<std::string> version = header("MCP-Protocol-Version");
  if (!version) return mismatch("the MCP-Protocol-Version header is required");
  std::string body_version;
  if (m.params.is_object() && m.params.contains("_meta") && m.params["_meta"].is_object()) {
    auto it = m.params["_meta"].find(kMetaProtocolVersion);
    if (it != m.params["_meta"].end() && it->is_string()) body_version = it->get<std::string>();
  }
  if (!body_version.empty() && *version != body_version) {
    return mismatch("MCP-Protocol-Version header value '" + Clip(*version, 64) + "' does not match body value '" +
                    Clip(body_version, 64) + "'");
  }
  if (m.kind != protocol::jsonrpc::Kind::kRequest) return std::nullopt;  // no header rules for notifications
  std::optional<std::string> method = header("Mcp-Method");
  if (!method) return mismatch("the Mcp-Method header is required");
  if (*method != m.method) {
    return mismatch("Mcp-Method header value '" + Clip(*method, 64) + "' does not match body value '" +
                    Clip(m.method, 64) + "'");
  }
  const char* name_field = nullptr;
  if (m.method == "tools/call" || m.method == "prompts/get") name_field = "name";
  if (m.method == "resources/read") name_field = "uri";
  // The Tasks extension: Mcp-Name carries params.taskId.
  if (m.method == "tasks/get" || m.method == "tasks/update" || m.method == "tasks/cancel") name_field = "taskId";
  if (name_field == nullptr) return std::nullopt;
  std::optional<std::string> raw = header("Mcp-Name");
  if (!raw) return mismatch(std::string("the Mcp-Name header is required for ") + m.method);
  std::optional<std::string> name = DecodeHeaderValue(*raw);
  if (!name) return mismatch("Mcp-Name header value is malformed");
  std::string body_name;
  if (m.params.is_object() && m.params.contains(name_field) && m.params[name_field].is_string()) {
    body_name = m.params[name_field].get<std::string>();
  }
  if (*name != body_name) {
    return mismatch("Mcp-Name header value '" + Clip(*name, 128) + "' does not match body value '" +
                    Clip(body_name, 128) + "'");
  }
  return std::nullopt;
}

}  // namespace airlock::mcp::modern
