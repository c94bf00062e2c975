// The transport-independent MCP protocol engine.
//
//   runner::RunnerClient executor(...);          // any runtimes::CodeExecutor
//   mcp::McpServer server(config, executor);
//   return mcp::ServeStdio(server, STDIN_FILENO, STDOUT_FILENO);   // or:
//   mcp::HttpTransport http(server, mcp::HttpOptionsFromConfig(config, token));
//
// One McpServer serves one endpoint (governance/policy.h: a named set of
// connectors and a code-mode setting). It owns the tools (run_code,
// list_languages; in code mode execute, search_tools, describe_tool,
// propose_code_tool and the approved code tools; in gateway mode the
// connector tools), the airlock://languages resource, and the worker pool
// that runs tools/call requests. Sessions are created by transports with the
// caller's identity; each caller sees only the tools its role allows
// (ToolsFor), and a tool it may not see is reported exactly like an unknown
// one. The server must outlive its sessions.
#ifndef AIRLOCK_MCP_SERVER_H_
#define AIRLOCK_MCP_SERVER_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "codemode/limits.h"
#include "codetools/code_tool_store.h"
#include "config/config.h"
#include "gateway/gateway.h"
#include "governance/policy.h"
#include "mcp/access.h"
#include "mcp/log_level.h"
#include "mcp/reply_channel.h"
#include "mcp/run_tracker.h"
#include "mcp/session.h"
#include "mcp/subscriptions.h"
#include "mcp/task_manager.h"
#include "mcp/tools/code_tool_tool.h"
#include "mcp/tools/languages.h"
#include "mcp/tools/tool.h"
#include "mcp/worker_pool.h"
#include "runtimes/code_executor.h"
#include "sessions/session_registry.h"

namespace airlock::mcp {

struct ServerOptions {
  std::string endpoint{};                          // "" : the policy's default endpoint
  codetools::CodeToolStore* code_tools = nullptr;  // null: no code tools, no proposals
  audit::AuditLog* audit = nullptr;                // null: nothing is audited
  // Shared by every endpoint's server (serve makes one); null: the server
  // keeps its own when the config enables sessions.
  sessions::SessionRegistry* sessions = nullptr;
  // The calls in flight, shared by every endpoint's server (serve makes
  // one); null: the server keeps its own.
  RunTracker* runs = nullptr;
  // The MCP task table (state::OpenTaskStore), shared by every endpoint's
  // server; null: the server keeps its own in memory.
  std::shared_ptr<tasks::TaskStore> tasks{};
};

class McpServer {
 public:
  // `executor` must outlive the server. Tool calls beyond
  // max_concurrent_runs + max_queued_runs (+ a small margin) in flight at
  // once are refused with a "busy" tool error before reaching the executor.
  //
  // With a `gateway` that has connectors (and code mode enabled in the
  // config) the server also
  // offers code mode: execute, search_tools and describe_tool. The gateway
  // must outlive the server.
  //
  // Roles, endpoints and access come from the config ("roles", "endpoints",
  // "access"); an invalid policy (serve validates it first) or an unknown
  // endpoint leaves a server that offers nothing. `options` pointers must
  // outlive the server.
  McpServer(const config::Config& config, runtimes::CodeExecutor& executor, gateway::Gateway* gateway = nullptr,
            ServerOptions options = {});
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // A new client session; `standalone` carries server-initiated messages.
  // `caller` is who the transport authenticated (its endpoint is set here).
  std::shared_ptr<Session> NewSession(std::shared_ptr<ReplyChannel> standalone, governance::Caller caller);
  // The local stdio user (config access.stdio).
  std::shared_ptr<Session> NewSession(std::shared_ptr<ReplyChannel> standalone) {
    return NewSession(std::move(standalone), StdioCaller());
  }
  governance::Caller StdioCaller() const;

  // Tells every session that the tool list changed (e.g. the runner came
  // back with a different set of languages): initialized legacy sessions,
  // and the modern subscriptions/listen streams that asked for it.
  void NotifyToolsChanged();
  // The endpoint's open subscriptions/listen streams (subscriptions.h).
  SubscriptionHub& subscriptions() { return subscriptions_; }
  // Sends a log message to every session whose level admits it.
  void Broadcast(LogLevel level, const std::string& text);

  const config::Config& config() const { return config_; }
  LanguageCatalog& languages() { return catalog_; }
  // The tools `caller` may see and call, in tools/list order.
  std::vector<std::shared_ptr<Tool>> ToolsFor(const governance::Caller& caller);
  // nullptr if the tool does not exist or `caller` may not see it.
  std::shared_ptr<Tool> FindToolFor(const governance::Caller& caller, const std::string& name);

  // The W3C trace context a modern request carries in params._meta
  // (traceparent, tracestate); empty when absent.
  struct TraceContext {
    std::string traceparent, tracestate;
  };
  // Writes the "tool_call" event every tools/call leaves before it runs
  // (denied ones too). An error means the audit log is fail-closed and
  // could not be written: the call must be refused. A non-empty trace
  // context is recorded in the event's detail (traceparent, tracestate).
  Status AuditToolCall(const governance::Caller& caller, const std::string& run_id, const std::string& tool,
                       const nlohmann::json& args, const std::string& decision, const TraceContext& trace = {});

  const governance::Policy& policy() const { return policy_; }
  // nullptr if the server has no valid endpoint (then it offers nothing).
  const governance::Endpoint* endpoint() const { return endpoint_ok_ ? &endpoint_ : nullptr; }
  audit::AuditLog* audit() const { return options_.audit; }
  WorkerPool& pool() { return pool_; }
  // The tool calls in flight (this server's own tracker unless shared).
  RunTracker& runs() { return options_.runs != nullptr ? *options_.runs : own_runs_; }
  // The MCP Tasks extension (task_manager.h); null when config tasks.mode
  // is "never".
  TaskManager* tasks() { return tasks_.get(); }
  // The `instructions` string of the initialize result.
  std::string Instructions();

 private:
  std::vector<std::shared_ptr<Session>> LiveSessions();

  const config::Config config_;
  const ServerOptions options_;
  gateway::Gateway* const gateway_;
  governance::Policy policy_;
  governance::Endpoint endpoint_;
  bool endpoint_ok_ = false;
  std::unique_ptr<Access> access_;
  bool code_mode_ = false;  // connectors configured and codeMode.enabled
  codemode::Limits code_limits_;
  LanguageCatalog catalog_;
  std::unique_ptr<sessions::SessionRegistry> own_sessions_;  // when options_.sessions is null
  RunTracker own_runs_;                                      // when options_.runs is null
  sessions::SessionRegistry* code_sessions_ = nullptr;       // null: sessions are off here
  std::shared_ptr<Tool> run_code_, list_languages_, execute_, search_, describe_, propose_;
  std::shared_ptr<Tool> open_session_, close_session_, list_sessions_;
  std::shared_ptr<Tool> pause_session_, resume_session_, fork_session_;
  CodeToolDeps code_tool_deps_;
  SubscriptionHub subscriptions_;
  std::mutex mu_;
  std::vector<std::weak_ptr<Session>> sessions_;
  WorkerPool pool_;  // last: joined first on destruction
  // After the pool: destroyed first, it cancels its runs and waits for them
  // (on the pool's threads) before the pool is joined.
  std::unique_ptr<TaskManager> tasks_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_SERVER_H_
