// Forward declarations of the cpp-httplib types our headers name, so that
// only .cc files include the (large) httplib.h.
#ifndef AIRLOCK_MCP_HTTPLIB_FWD_H_
#define AIRLOCK_MCP_HTTPLIB_FWD_H_

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

#endif  // AIRLOCK_MCP_HTTPLIB_FWD_H_
