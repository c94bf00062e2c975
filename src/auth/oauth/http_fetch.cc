#include "auth/oauth/http_fetch.h"

#include <httplib.h>

#include <chrono>

namespace airlock::auth::oauth {
namespace {

constexpr size_t kMaxBody = 1 << 20;

}  // namespace

StatusOr<std::string> HttpGet(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos || (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0)) {
    return InvalidArgument(url + ": not an http(s) URL");
  }
  const size_t path_at = url.find('/', scheme + 3);
  const std::string origin = path_at == std::string::npos ? url : url.substr(0, path_at);
  const std::string path = path_at == std::string::npos ? "/" : url.substr(path_at);
  httplib::Client client(origin);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::seconds(10));
  client.set_write_timeout(std::chrono::seconds(5));
  client.set_follow_location(false);
  client.set_keep_alive(false);
  std::string body;
  bool too_large = false;
  httplib::Result res = client.Get(path, httplib::Headers{{"Accept", "application/json"}},
                                   [&](const char* data, size_t n) {
                                     if (body.size() + n > kMaxBody) {
                                       too_large = true;
                                       return false;
                                     }
                                     body.append(data, n);
                                     return true;
                                   });
  if (too_large) return ResourceExhausted(url + ": response larger than 1 MiB");
  if (!res) return Unavailable(url + ": " + httplib::to_string(res.error()));
  if (res->status < 200 || res->status >= 300) return Unavailable(url + ": HTTP " + std::to_string(res->status));
  return body;
}

}  // namespace airlock::auth::oauth
