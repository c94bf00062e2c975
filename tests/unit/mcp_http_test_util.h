// A real Streamable HTTP front for unit tests: HttpTransport serving
// `server` on 127.0.0.1 at a free port with 100 ms heartbeats (the other
// options as given), and an httplib client for it with a 10 s read timeout.
#ifndef AIRLOCK_TESTS_UNIT_MCP_HTTP_TEST_UTIL_H_
#define AIRLOCK_TESTS_UNIT_MCP_HTTP_TEST_UTIL_H_

#include <httplib.h>

#include <memory>

#include "base/status.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"

namespace airlock::mcp::testing {

// Fills `*http` (started) and `*client`; the caller stops `*http`.
inline Status StartTestHttpFront(McpServer& server, HttpOptions o, std::unique_ptr<HttpTransport>* http,
                                 std::unique_ptr<httplib::Client>* client) {
  o.host = "127.0.0.1";
  o.port = 0;
  o.heartbeat_ms = 100;
  *http = std::make_unique<HttpTransport>(server, o);
  if (Status st = (*http)->Start(); !st.ok()) return st;
  *client = std::make_unique<httplib::Client>("127.0.0.1", (*http)->port());
  (*client)->set_read_timeout(10);
  return OkStatus();
}

}  // namespace airlock::mcp::testing

#endif  // AIRLOCK_TESTS_UNIT_MCP_HTTP_TEST_UTIL_H_
