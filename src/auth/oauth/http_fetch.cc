#include "auth/oauth/http_fetch.h"

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string_view>

#include "mcp/http_security.h"

namespace airlock::auth::oauth {
namespace {

struct Target {
  std::string origin;
  std::string path;
};

StatusOr<Target> Split(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos || (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0)) {
    return InvalidArgument(url + ": not an http(s) URL");
  }
  const size_t path_at = url.find('/', scheme + 3);
  return Target{path_at == std::string::npos ? url : url.substr(0, path_at),
                path_at == std::string::npos ? "/" : url.substr(path_at)};
}

std::unique_ptr<httplib::Client> MakeClient(const std::string& origin, const HttpLimits& limits) {
  auto client = std::make_unique<httplib::Client>(origin);
  client->set_connection_timeout(std::chrono::seconds(limits.connect_s));
  client->set_read_timeout(std::chrono::seconds(limits.read_s));
  client->set_write_timeout(std::chrono::seconds(limits.connect_s));
  client->set_follow_location(false);
  client->set_keep_alive(false);
  return client;
}

// The answer as it arrives: at most `max_body` bytes, and all of it within
// connect_s + read_s of the start (the read timeout alone is per read, so a
// server dripping bytes could hold the request for ever).
struct Receiver {
  explicit Receiver(const HttpLimits& l)
      : max(l.max_body), deadline(std::chrono::steady_clock::now() + std::chrono::seconds(l.connect_s + l.read_s)) {}
  httplib::ContentReceiver Fn() {
    return [this](const char* data, size_t n) {
      if (body.size() + n > max) {
        too_large = true;
        return false;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        too_slow = true;
        return false;
      }
      body.append(data, n);
      return true;
    };
  }
  const size_t max;
  const std::chrono::steady_clock::time_point deadline;
  std::string body;
  bool too_large = false;
  bool too_slow = false;
};

StatusOr<std::string> Outcome(const std::string& url, const httplib::Result& res, Receiver& r) {
  if (r.too_large) return ResourceExhausted(url + ": response larger than " + std::to_string(r.max) + " bytes");
  if (r.too_slow) return Unavailable(url + ": response too slow");
  if (!res) return Unavailable(url + ": " + httplib::to_string(res.error()));
  if (res->status < 200 || res->status >= 300) return Unavailable(url + ": HTTP " + std::to_string(res->status));
  return std::move(r.body);
}

}  // namespace

HttpLimits IntrospectionLimits() { return HttpLimits{.connect_s = 2, .read_s = 5, .max_body = 64 * 1024}; }

StatusOr<std::string> HttpGet(const std::string& url) {
  AIRLOCK_ASSIGN_OR_RETURN(Target t, Split(url));
  const HttpLimits limits;
  auto client = MakeClient(t.origin, limits);
  Receiver r(limits);
  httplib::Result res = client->Get(t.path, httplib::Headers{{"Accept", "application/json"}}, r.Fn());
  return Outcome(url, res, r);
}

StatusOr<std::string> HttpPostForm(const std::string& url, const std::string& form, const std::string& authorization,
                                   const HttpLimits& limits) {
  AIRLOCK_ASSIGN_OR_RETURN(Target t, Split(url));
  auto client = MakeClient(t.origin, limits);
  httplib::Request req;
  req.method = "POST";
  req.path = t.path;
  req.headers = {{"Accept", "application/json"}, {"Content-Type", "application/x-www-form-urlencoded"}};
  if (!authorization.empty()) req.headers.emplace("Authorization", authorization);
  req.body = form;
  Receiver r(limits);
  req.content_receiver = [recv = r.Fn()](const char* data, size_t n, uint64_t, uint64_t) { return recv(data, n); };
  httplib::Result res = client->send(req);
  return Outcome(url, res, r);
}

bool IsLoopbackHttpUrl(const std::string& url) {
  static constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) return false;
  std::string authority = url.substr(kScheme.size());
  authority = authority.substr(0, authority.find_first_of("/?#"));
  const std::string host = !authority.empty() && authority[0] == '['
                               ? authority.substr(0, authority.find(']') + 1)
                               : authority.substr(0, authority.find(':'));
  return mcp::IsLoopbackName(host);
}

std::string FormEncode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '*') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace airlock::auth::oauth
