// How the console's API answers (internal to src/console): JSON bodies,
// {"error": message} for failures, and a Status's code as an HTTP status.
#ifndef AIRLOCK_CONSOLE_CONSOLE_REPLY_H_
#define AIRLOCK_CONSOLE_CONSOLE_REPLY_H_

#include <optional>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::console {

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body);
void ReplyError(httplib::Response& res, int status, const std::string& message);
// 400 InvalidArgument, 403 PermissionDenied, 404 NotFound, 409
// FailedPrecondition, 503 Unavailable, else 500.
int HttpStatusOf(const Status& st);
void ReplyStatus(httplib::Response& res, const Status& st);

// The request's JSON object body, or nullopt after answering 400.
std::optional<nlohmann::json> JsonBody(const httplib::Request& req, httplib::Response& res);
// body[key] as a string ("" if absent); nullopt after answering 400 when it
// is not a string or longer than max_bytes.
std::optional<std::string> StringField(const nlohmann::json& body, const char* key, size_t max_bytes,
                                       httplib::Response& res);

}  // namespace airlock::console

#endif  // AIRLOCK_CONSOLE_CONSOLE_REPLY_H_
