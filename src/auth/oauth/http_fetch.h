// HTTP requests to an authorization server: http(s) only, no redirects,
// 2xx only, bounded time and response size.
//
//   HttpGet(jwks_uri)                         metadata or keys: 5 s to connect, 10 s to read, 1 MiB
//   HttpPostForm(endpoint, "token=...", "Basic ...", IntrospectionLimits())
#ifndef AIRLOCK_AUTH_OAUTH_HTTP_FETCH_H_
#define AIRLOCK_AUTH_OAUTH_HTTP_FETCH_H_

#include <cstddef>
#include <string>

#include "base/status.h"

namespace airlock::auth::oauth {

struct HttpLimits {
  int connect_s = 5;  // also the write timeout
  int read_s = 10;    // per read; the whole answer within connect_s + read_s
  size_t max_body = 1 << 20;
};

// For token introspection, on the request path of a client: 2 s to connect,
// 5 s to answer, all of it within 7 s, 64 KiB.
HttpLimits IntrospectionLimits();

StatusOr<std::string> HttpGet(const std::string& url);

// POST of an application/x-www-form-urlencoded `form` (already encoded) with
// `authorization` as the Authorization header (empty: none). Unavailable for
// a connection error, a timeout or a non-2xx status; ResourceExhausted when
// the answer is larger than limits.max_body.
StatusOr<std::string> HttpPostForm(const std::string& url, const std::string& form, const std::string& authorization,
                                   const HttpLimits& limits = {});

// True for an http:// URL whose host is a loopback name or address (the only
// place plain HTTP may carry tokens or secrets): "http://127.0.0.1:9/x",
// "http://[::1]/", "http://localhost". False for https:// and anything else.
bool IsLoopbackHttpUrl(const std::string& url);

// application/x-www-form-urlencoded encoding of one name or value.
std::string FormEncode(const std::string& s);

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_HTTP_FETCH_H_
