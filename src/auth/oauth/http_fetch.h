// GET of an authorization server's metadata or keys: http(s) only, 5 s to
// connect, 10 s to read, at most 1 MiB, no redirects, 2xx only.
#ifndef AIRLOCK_AUTH_OAUTH_HTTP_FETCH_H_
#define AIRLOCK_AUTH_OAUTH_HTTP_FETCH_H_

#include <string>

#include "base/status.h"

namespace airlock::auth::oauth {

StatusOr<std::string> HttpGet(const std::string& url);

}  // namespace airlock::auth::oauth

#endif  // AIRLOCK_AUTH_OAUTH_HTTP_FETCH_H_
