// One logical MCP client connection: the request dispatcher shared by both
// protocol eras (tools/list, tools/call, resources/*), the table of in-flight
// tools/call requests (for cancellation and progress), and a thin front per
// era:
//   - legacy (2025-11-25 and earlier, session.cc): initialize handshake,
//     negotiated version, logging/setLevel, list_changed on the standalone
//     channel;
//   - modern (2026-07-28, session_modern.cc, modern.h): no handshake; every
//     request carries its version, capabilities, client and log level in
//     params._meta, results carry resultType and caching hints.
// Transport-independent: stdio makes one per connection (its first request
// selects the era: initialize -> legacy, a request with modern _meta or
// server/discover -> modern), HTTP one per Mcp-Session-Id (legacy) or one per
// modern POST (UseModernEra).
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
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "governance/policy.h"
#include "protocol/json_rpc.h"
#include "mcp/log_level.h"
#include "mcp/modern.h"
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
  enum class Era { kUndetermined, kLegacy, kModern };

  // Use McpServer::NewSession. `standalone` receives server-initiated
  // messages (may be null: they are dropped).
  Session(McpServer& server, std::shared_ptr<ReplyChannel> standalone, governance::Caller caller);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Parses one raw message (one stdio line) and handles it.
  void HandleText(std::string_view text, std::shared_ptr<ReplyChannel> reply);
  // Handles one validated message.
  void Handle(const protocol::jsonrpc::Message& message, std::shared_ptr<ReplyChannel> reply);

  // Cancels the in-flight request `id` (as notifications/cancelled does):
  // its run is cancelled and no response is sent. False if unknown/finished.
  bool CancelRequest(const nlohmann::json& id);

  // Cancels every in-flight call and waits until all have finished; later
  // requests are refused. Idempotent. Transports call it on EOF / DELETE.
  void Close();

  // Fixes the era to modern before the first message (the HTTP transport's
  // per-request sessions). `ephemeral_identity`: the caller is an anonymous
  // identity minted for this one request, so it cannot own code sessions
  // (open_session is refused: nothing could reach the session afterwards).
  void UseModernEra(bool ephemeral_identity);
  Era era() const;

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
  // Who asks, in which version, wanting what: the session's state (legacy)
  // or the request's _meta (modern).
  struct Scope {
    std::string version;
    governance::Caller caller;
    bool modern = false;
    std::optional<LogLevel> log_level;  // modern: the request's level; none: no logs
    std::string traceparent, tracestate;
  };

  // Decides the era on the first request (stdio) and returns it.
  Era DecideEra(const protocol::jsonrpc::Message& m);
  // The modern front (session_modern.cc).
  void HandleModern(const protocol::jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply);
  nlohmann::json Discover(const protocol::jsonrpc::Message& m);
  // subscriptions/listen (session_modern.cc): opens a stream on `reply`
  // (acknowledged at once, answered only when it ends); EndListen ends one
  // without a response (cancelled, or its HTTP client left); EndListens ends
  // all with a completion response (Close).
  void Listen(const protocol::jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply);
  bool EndListen(const std::string& key);
  void EndListens();
  // The Tasks extension (session_tasks.cc, task_manager.h). MaybeStartTask
  // answers a tools/call with a CreateTaskResult when the request declares
  // the extension and the server's task policy wants this call as a task
  // (true: answered); TaskRequest answers tasks/get, tasks/cancel and
  // tasks/update for `who`.
  bool MaybeStartTask(const protocol::jsonrpc::Message& m, const modern::RequestMeta& meta, const Scope& scope,
                      const std::shared_ptr<ReplyChannel>& reply);
  nlohmann::json TaskRequest(const protocol::jsonrpc::Message& m, const modern::RequestMeta& meta, const governance::Caller& who);

  nlohmann::json HandleRequest(const protocol::jsonrpc::Message& m);
  void HandleNotification(const protocol::jsonrpc::Message& m);
  nlohmann::json Initialize(const protocol::jsonrpc::Message& m);
  nlohmann::json SetLevel(const protocol::jsonrpc::Message& m);
  // The shared dispatcher: answers for `who`; `sorted` lists tools by name.
  nlohmann::json ListTools(const protocol::jsonrpc::Message& m, const governance::Caller& who, bool sorted);
  nlohmann::json ListResources(const protocol::jsonrpc::Message& m);
  nlohmann::json ReadResource(const protocol::jsonrpc::Message& m, int not_found_code);
  void StartToolCall(const protocol::jsonrpc::Message& m, std::shared_ptr<ReplyChannel> reply, Scope scope);
  void RunToolCall(const std::shared_ptr<Call>& call, Tool& tool, const nlohmann::json& args);
  // A tools/call response in the call's era.
  nlohmann::json ResultFor(const Call& call, nlohmann::json result) const;
  nlohmann::json ErrorFor(const Call& call, int code, const std::string& message) const;
  void FinishCall(const std::shared_ptr<Call>& call, const nlohmann::json& response);

  McpServer& server_;
  const std::shared_ptr<ReplyChannel> standalone_;

  mutable std::mutex mu_;
  std::condition_variable calls_done_;
  bool initialized_ = false;
  Era era_ = Era::kUndetermined;
  bool ephemeral_identity_ = false;
  bool closed_ = false;
  std::string protocol_version_;
  std::string client_name_;
  governance::Caller caller_;
  LogLevel level_ = LogLevel::kWarning;
  bool level_set_ = false;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // key: id.dump()
  int finishing_ = 0;  // calls whose response is being sent
  struct OpenListen {
    uint64_t handle = 0;  // in server_.subscriptions()
    nlohmann::json id;
    std::shared_ptr<ReplyChannel> reply;
  };
  std::map<std::string, OpenListen> listens_;  // key: id.dump()
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_SESSION_H_
