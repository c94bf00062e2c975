#include "protocol/json_rpc.h"

namespace airlock::protocol::jsonrpc {
namespace {

using nlohmann::json;

ParseOutcome Fail(const json& id, int code, const std::string& message) {
  ParseOutcome out;
  out.error_response = MakeError(id, code, message);
  return out;
}

bool IsValidId(const json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

ParseOutcome Parse(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Fail(nullptr, kParseError, "Parse error: not valid JSON");
  return Validate(j);
}

ParseOutcome Validate(const json& j) {
  if (j.is_array()) {
    return Fail(nullptr, kInvalidRequest, "Invalid Request: JSON-RPC batches are not supported");
  }
  if (!j.is_object()) return Fail(nullptr, kInvalidRequest, "Invalid Request: expected an object");
  json id = nullptr;
  bool has_id = j.contains("id");
  if (has_id) {
    if (!IsValidId(j["id"])) {
      return Fail(nullptr, kInvalidRequest, "Invalid Request: id must be a string or an integer");
    }
    id = j["id"];
  }
  auto version = j.find("jsonrpc");
  if (version == j.end() || *version != "2.0") {
    return Fail(id, kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  }
  Message m;
  m.id = id;
  if (j.contains("method")) {
    if (!j["method"].is_string()) {
      return Fail(id, kInvalidRequest, "Invalid Request: method must be a string");
    }
    if (j.contains("result") || j.contains("error")) {
      return Fail(id, kInvalidRequest, "Invalid Request: a request cannot carry result or error");
    }
    m.method = j["method"].get<std::string>();
    m.kind = has_id ? Kind::kRequest : Kind::kNotification;
    if (j.contains("params")) {
      const json& p = j["params"];
      if (!p.is_object() && !p.is_null()) {
        return Fail(id, kInvalidRequest, "Invalid Request: params must be an object");
      }
      m.params = p;
    }
    return ParseOutcome{std::move(m), nullptr};
  }
  bool has_result = j.contains("result");
  bool has_error = j.contains("error");
  if (has_id && (has_result != has_error)) {
    m.kind = Kind::kResponse;
    if (has_result) m.result = j["result"];
    if (has_error) m.error = j["error"];
    return ParseOutcome{std::move(m), nullptr};
  }
  return Fail(id, kInvalidRequest, "Invalid Request: missing method");
}

json MakeResult(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json MakeError(const json& id, int code, const std::string& message, const json& data) {
  json err = {{"code", code}, {"message", message}};
  if (!data.is_null()) err["data"] = data;
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
}

json MakeNotification(const std::string& method, json params) {
  json n = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) n["params"] = std::move(params);
  return n;
}

bool IsResponse(const json& j) {
  return j.is_object() && j.contains("id") && (j.contains("result") || j.contains("error")) &&
         !j.contains("method");
}

std::string Serialize(const json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace airlock::protocol::jsonrpc
