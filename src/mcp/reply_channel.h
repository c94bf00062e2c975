// Where the server's messages for one client go. Transports implement it.
#ifndef AIRLOCK_MCP_REPLY_CHANNEL_H_
#define AIRLOCK_MCP_REPLY_CHANNEL_H_

#include <nlohmann/json.hpp>

namespace airlock::mcp {

// Carries the replies to one incoming message (stdio: all go to stdout; HTTP:
// to that POST's response or SSE stream), or the session's server-initiated
// messages (the "standalone" channel: stdout, or the GET SSE stream).
// Implementations must be thread-safe.
class ReplyChannel {
 public:
  virtual ~ReplyChannel() = default;
  // A notification related to the message (progress, log).
  virtual void Notify(const nlohmann::json& notification) = 0;
  // Called exactly once per message handed to Session::Handle*: with the
  // response, or nullptr when there is none (a notification, a response, or
  // a cancelled request). Never called on a standalone channel.
  virtual void Finish(const nlohmann::json* response) = 0;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_REPLY_CHANNEL_H_
