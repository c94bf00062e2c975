// MCP over stdio: newline-delimited JSON-RPC messages on a pair of fds.
//
// Only JSON-RPC goes to `out_fd`; diagnostics go to stderr. A line longer
// than config.server.max_message_bytes is answered with a -32600 "message
// too large" error (id null) and discarded as it streams in, never
// buffered whole. End of input cancels the in-flight runs, waits for them
// and returns 0 (1 on a read error). SIGPIPE is set to SIG_IGN for the
// process so a vanished client surfaces as EPIPE, not a kill.
#ifndef AIRLOCK_MCP_STDIO_TRANSPORT_H_
#define AIRLOCK_MCP_STDIO_TRANSPORT_H_

#include "mcp/server.h"

namespace airlock::mcp {

// Serves one session until EOF on `in_fd`, or until `stop_fd` (if not -1;
// e.g. a signalfd of SIGTERM) becomes readable: then it ends as at EOF.
// Does not close the fds.
int ServeStdio(McpServer& server, int in_fd, int out_fd, int stop_fd = -1);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_STDIO_TRANSPORT_H_
