// The transport-independent MCP protocol engine.
//
//   runner::RunnerClient executor(...);          // any runtimes::CodeExecutor
//   mcp::McpServer server(config, executor);
//   return mcp::ServeStdio(server, STDIN_FILENO, STDOUT_FILENO);   // or:
//   mcp::HttpTransport http(server, mcp::HttpOptionsFromConfig(config, token));
//
// McpServer owns the tools (run_code, list_languages, and in code mode
// execute, search_tools, describe_tool), the airlock://languages
// resource, and the worker pool that runs tools/call requests. Sessions are
// created by transports; the server must outlive them.
#ifndef AIRLOCK_MCP_SERVER_H_
#define AIRLOCK_MCP_SERVER_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "gateway/gateway.h"
#include "mcp/log_level.h"
#include "mcp/reply_channel.h"
#include "mcp/session.h"
#include "mcp/tools/languages.h"
#include "mcp/tools/tool.h"
#include "mcp/worker_pool.h"
#include "runtimes/code_executor.h"

namespace airlock::mcp {

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
  McpServer(const config::Config& config, runtimes::CodeExecutor& executor, gateway::Gateway* gateway = nullptr);
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // A new client session; `standalone` carries server-initiated messages.
  std::shared_ptr<Session> NewSession(std::shared_ptr<ReplyChannel> standalone);

  // Tells every session that the tool list changed (e.g. the runner came
  // back with a different set of languages).
  void NotifyToolsChanged();
  // Sends a log message to every session whose level admits it.
  void Broadcast(LogLevel level, const std::string& text);

  const config::Config& config() const { return config_; }
  LanguageCatalog& languages() { return catalog_; }
  const std::vector<std::unique_ptr<Tool>>& tools() const { return tools_; }
  Tool* FindTool(const std::string& name) const;
  WorkerPool& pool() { return pool_; }
  // The `instructions` string of the initialize result.
  std::string Instructions();

 private:
  std::vector<std::shared_ptr<Session>> LiveSessions();

  const config::Config config_;
  bool code_mode_ = false;
  LanguageCatalog catalog_;
  std::vector<std::unique_ptr<Tool>> tools_;
  std::mutex mu_;
  std::vector<std::weak_ptr<Session>> sessions_;
  WorkerPool pool_;  // last: joined first on destruction
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_SERVER_H_
