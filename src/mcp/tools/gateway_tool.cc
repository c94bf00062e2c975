#include "mcp/tools/gateway_tool.h"

#include <chrono>

#include "audit/redaction.h"
#include "base/encoding.h"
#include "codemode/bridge_frames.h"
#include "gateway/schema_validator.h"
#include "mcp/tools/program_run.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

}  // namespace

json GatewayTool::Definition() {
  json d = {{"name", entry_.name},
            {"description", entry_.description},
            {"inputSchema", entry_.input_schema.is_object() ? entry_.input_schema : json{{"type", "object"}}}};
  if (!entry_.title.empty()) d["title"] = entry_.title;
  if (entry_.output_schema.is_object()) d["outputSchema"] = entry_.output_schema;
  // Airlock's effective class, not the server's claim.
  d["annotations"] = {{"readOnlyHint", entry_.read_only},
                      {"destructiveHint", !entry_.read_only},
                      {"openWorldHint", true}};
  return d;
}

StatusOr<json> GatewayTool::Call(const json& arguments, ToolCallContext& ctx) {
  const auto started = std::chrono::steady_clock::now();
  const json args = arguments.is_null() ? json::object() : arguments;
  if (!args.is_object()) return InvalidArgument("arguments must be an object");
  audit::CallRow row;
  row.run_id = ctx.run_id();
  row.seq = 1;
  row.connector = entry_.connector;
  row.tool = entry_.tool;
  row.effective_class = entry_.effective_class();
  row.args_sha256 = Sha256Hex(codemode::Dump(args));
  row.args_redacted = audit::RedactArgs(args);

  json out;
  // Re-check against the current catalog (annotations may have changed).
  StatusOr<gateway::ToolEntry> now = gateway_.FindTool(entry_.name, access_.CallableFilter(ctx.caller()));
  if (!now.ok()) {
    row.decision = "denied";
    row.reason = "not_callable";
    row.result_status = "denied";
    out = CodeModeErrorResult("E_TOOL_NOT_DECLARED", "tool \"" + entry_.name + "\" is not available");
  } else if (Status st = gateway::ValidateJsonSchema(now->input_schema, args); !st.ok()) {
    row.decision = "denied";
    row.reason = "schema";
    row.result_status = "denied";
    out = CodeModeErrorResult("E_INVALID_ARGS", st.message());
  } else {
    row.decision = "allowed";
    gateway::CallOutcome r = gateway_.CallTool(entry_.name, args, &ctx.cancel());
    if (r.ok) {
      const std::string text = r.value.is_string() ? r.value.get<std::string>() : codemode::Dump(r.value);
      row.result_bytes = static_cast<int64_t>(text.size());
      if (text.size() > max_result_bytes_) {
        row.result_status = "result_too_large";
        out = CodeModeErrorResult("E_LIMIT_RESULT", "the tool's result is " + std::to_string(text.size()) +
                                                        " bytes, over the limit of " +
                                                        std::to_string(max_result_bytes_) + " bytes");
      } else {
        row.result_status = "ok";
        out = {{"content", json::array({{{"type", "text"}, {"text", text}}})}};
        if (r.value.is_object()) out["structuredContent"] = r.value;
      }
    } else {
      row.result_status = r.error_code == gateway::kErrCancelled ? "timeout" : "is_error";
      out = {{"content", json::array({{{"type", "text"}, {"text", r.error_message}}})}, {"isError", true}};
    }
  }
  row.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  if (audit_ != nullptr) {
    if (Status st = audit_->Call(row); !st.ok()) {
      return CodeModeErrorResult("E_AUDIT_UNAVAILABLE",
                                 "the call finished but could not be audited, so its result is withheld: " + st.message());
    }
  }
  return out;
}

}  // namespace airlock::mcp
