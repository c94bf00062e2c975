#include "console/console_reply.h"

namespace airlock::console {

using nlohmann::json;

void ReplyJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void ReplyError(httplib::Response& res, int status, const std::string& message) {
  ReplyJson(res, status, {{"error", message}});
}

int HttpStatusOf(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

void ReplyStatus(httplib::Response& res, const Status& st) { ReplyError(res, HttpStatusOf(st), st.message()); }

std::optional<json> JsonBody(const httplib::Request& req, httplib::Response& res) {
  json body = req.body.empty() ? json::object() : json::parse(req.body, nullptr, false);
  if (!body.is_object()) {
    ReplyError(res, 400, "expected a JSON object body");
    return std::nullopt;
  }
  return body;
}

std::optional<std::string> StringField(const json& body, const char* key, size_t max_bytes, httplib::Response& res) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string() || it->get_ref<const std::string&>().size() > max_bytes) {
    ReplyError(res, 400, std::string(key) + ": expected a string of at most " + std::to_string(max_bytes) + " bytes");
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace airlock::console
