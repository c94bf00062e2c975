// One logical MCP client session: lifecycle, version negotiation, logging
// level, and the table of in-flight tools/call requests (for cancellation
// and progress). Transport-independent: stdio makes one per connection, HTTP
// one per Mcp-Session-Id.
//
// Every message handed to Handle()/HandleText() gets exactly one
// ReplyChannel::Finish call. tools/call runs on the server's worker pool, so
// Handle returns at once and the transport keeps reading; every other
// request is answered before Handle returns.
#ifndef AIRLOCK_MCP_SESSION_H_
#define AIRLOCK_MCP_SESSION_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "governance/policy.h"
#include "mcp/json_rpc.h"
#include "mcp/log_level.h"
#include "mcp/reply_channel.h"

namespace airlock::mcp {

class McpServer;
class Tool;

// Protocol revisions airlock speaks, newest first.
inline constexpr const char* kSupportedProtocolVersions[] = {"2025-11-25", "2025-06-18",
                                                             "2025-03-26", "2024-11-05"};
inline constexpr const char* kLatestProtocolVersion = "2025-11-25";
bool IsSupportedProtocolVersion(const std::string& version);

class Session : public std::enable_shared_from_this<Session> {
 public:
  // Use McpServer::NewSession. `standalone` receives server-initiated
  // messages (may be null: they are dropped).
  Session(McpServer& server, std::shared_ptr<ReplyChannel> standalone, governance::Caller caller);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Parses one raw message (one stdio line) and handles it.
  void HandleText(std::string_view text, std::shared_ptr<ReplyChannel> reply);
  // Handles one validated message.
  void Handle(const jsonrpc::Message& message, std::shared_ptr<ReplyChannel> reply);

  // Cancels the in-flight request `id` (as notifications/cancelled does):
  // its run is cancelled and no response is sent. False if unknown/finished.
  bool CancelRequest(const nlohmann::json& id);

  // Cancels every in-flight call and waits until all have finished; later
  // requests are refused. Idempotent. Transports call it on EOF / DELETE.
  void Close();

  // Sends a server-initiated notification on the standalone channel.
  // notifications/message is filtered by the logging level.
  void SendStandalone(const nlohmann::json& notification);

  // Who the session belongs to (clientInfo is filled in at initialize).
  governance::Caller caller() const;
  bool initialized() const;
  bool closed() const;
  std::string protocol_version() const;  // empty before initialize
  size_t in_flight() const;
  // True once the client sent logging/setLevel.
  bool logging_requested() const;
  bool ShouldLog(LogLevel level) const;

 private:
  struct Call;
  class CallContext;

  nlohmann::json HandleRequest(const jsonrpc::Message& m);
  void HandleNotification(const jsonrpc::Message& m);
  nlohmann::json Initialize(const jsonrpc::Message& m);
  nlohmann::json SetLevel(const jsonrpc::Message& m);
  nlohmann::json ListTools(const jsonrpc::Message& m);
  nlohmann::json ListResources(const jsonrpc::Message& m);
  nlohmann::json ReadResource(const jsonrpc::Message& m);
  void StartToolCall(const jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply);
  void RunToolCall(const std::shared_ptr<Call>& call, Tool& tool, const nlohmann::json& args);
  void FinishCall(const std::shared_ptr<Call>& call, const nlohmann::json& response);

  McpServer& server_;
  const std::shared_ptr<ReplyChannel> standalone_;

  mutable std::mutex mu_;
  std::condition_variable calls_done_;
  bool initialized_ = false;
  bool closed_ = false;
  std::string protocol_version_;
  std::string client_name_;
  governance::Caller caller_;
  LogLevel level_ = LogLevel::kWarning;
  bool level_set_ = false;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // key: id.dump()
  int finishing_ = 0;  // calls whose response is being sent
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_SESSION_H_
