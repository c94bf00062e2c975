// A tool the MCP server offers (tools/list, tools/call).
#ifndef AIRLOCK_MCP_TOOLS_TOOL_H_
#define AIRLOCK_MCP_TOOLS_TOOL_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/cancel.h"
#include "base/status.h"
#include "governance/policy.h"
#include "mcp/log_level.h"

namespace airlock::mcp {

// What a running tool call may do besides returning its result. All methods
// are thread-safe (a CodeExecutor may report progress from its own thread).
class ToolCallContext {
 public:
  virtual ~ToolCallContext() = default;
  // notifications/progress; no-op unless the request carried a progressToken.
  // Values that do not exceed the last one sent are dropped (the spec
  // requires progress to increase).
  virtual void Progress(double progress, std::optional<double> total, const std::string& message) = 0;
  // notifications/message, dropped below the session's logging level.
  virtual void Log(LogLevel level, const std::string& text) = 0;
  // Fired by notifications/cancelled, session end or client disconnect.
  virtual CancelToken& cancel() = 0;
  // The protocol revision negotiated for the session, e.g. "2025-11-25".
  virtual const std::string& protocol_version() const = 0;
  // Who is calling (fixed for the session) and the id of this call in the
  // audit log ("r_..."; the id of the run for tools that run code).
  virtual const governance::Caller& caller() const = 0;
  virtual const std::string& run_id() const = 0;
  // A task's run (io.modelcontextprotocol/tasks) may ask a longer timeout
  // than a blocking call: config tasks.max_timeout_ms. Zero: the usual
  // limits.max_timeout_ms.
  virtual uint64_t task_max_timeout_ms() const { return 0; }
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string name() const = 0;
  // The tools/list entry: name, title, description, inputSchema,
  // outputSchema?, annotations?.
  virtual nlohmann::json Definition() = 0;
  // The entry as `caller` sees it (e.g. only the connectors they may use).
  virtual nlohmann::json DefinitionFor(const governance::Caller& caller) {
    (void)caller;
    return Definition();
  }
  // Returns a CallToolResult ({content, structuredContent?, isError?}).
  // An InvalidArgument status means the arguments have the wrong shape; the
  // session reports it as -32602 (protocol < 2025-11-25) or as an isError
  // result (2025-11-25, SEP-1303). Problems the model can fix by changing
  // values (unknown language, limit too high) are isError results.
  virtual StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) = 0;
};

// {"content":[{"type":"text","text":text}],"isError":true}
nlohmann::json ToolErrorResult(const std::string& text);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_TOOL_H_
