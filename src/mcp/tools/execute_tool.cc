#include "mcp/tools/execute_tool.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "base/byte_size.h"
#include "base/encoding.h"
#include "mcp/tools/catalog_tools.h"
#include "mcp/tools/program_run.h"
#include "mcp/tools/session_tools.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using runtimes::RunStatus;

constexpr size_t kMaxLoggedCalls = 100;  // entries of calls.log in the result

std::string Marker(uint64_t cap) {
  return "\n[airlock: console output truncated at " + std::to_string(cap) + " bytes]\n";
}

json ErrorObject(const std::string& code, const std::string& message, const std::string& name = "") {
  json e = {{"code", code}, {"message", message}};
  if (!name.empty()) e["name"] = name;
  return e;
}

// What went wrong, if anything, in the order that explains the most.
std::optional<json> RunError(const runtimes::RunResult& run, const codemode::BridgeSession& session,
                             bool deadline_passed) {
  if (run.status == RunStatus::kInternalError) {
    if (run.error_code == "cancelled") return ErrorObject("E_CANCELLED", "the run was cancelled");
    // A session's cell that did not run: the session is lost, busy, gone.
    if (run.error_code.rfind("E_SESSION_", 0) == 0) return ErrorObject(run.error_code, run.message);
    if (run.error_code == "invalid_request") return ErrorObject("E_INVALID_REQUEST", run.message);
    if (run.error_code == "runner_unavailable" || run.error_code == "busy") {
      return ErrorObject("E_UNAVAILABLE", run.message);
    }
    return ErrorObject("E_INTERNAL", run.message.empty() ? "the run failed" : run.message);
  }
  std::optional<json> thrown = session.return_error();
  if (run.status == RunStatus::kTimeout) {
    return ErrorObject("E_LIMIT_WALLCLOCK", "the program exceeded its wall-clock limit (" + run.message + ")");
  }
  if (run.status == RunStatus::kMemoryLimit) {
    return ErrorObject("E_LIMIT_MEMORY", "the program exceeded its memory limit (" + run.message + ")");
  }
  if (thrown) {
    const std::string name = thrown->value("name", std::string("Error"));
    const std::string message = thrown->value("message", std::string());
    // A program that abandoned a call and then waited forever sees its last
    // promise die when the server answers that call at the deadline: that
    // is the wall clock, not a program bug.
    if (name == "E_NEVER_SETTLED" && deadline_passed) {
      return ErrorObject("E_LIMIT_WALLCLOCK", "the program exceeded its wall-clock limit while waiting");
    }
    if (name.rfind("E_", 0) == 0) return ErrorObject(name, message);
    // An uncaught ToolError keeps its code (E_WRITE_NOT_ALLOWED, ...).
    const auto code = thrown->find("code");
    if (code != thrown->end() && code->is_string() && code->get<std::string>().rfind("E_", 0) == 0) {
      return ErrorObject(code->get<std::string>(), message, name);
    }
    return ErrorObject("E_PROGRAM_ERROR", name + ": " + message, name);
  }
  if (!session.protocol_error().empty()) return ErrorObject("E_BRIDGE_PROTOCOL", session.protocol_error());
  if (run.status == RunStatus::kKilledSignal) {
    return ErrorObject("E_PROGRAM_ERROR", "the program was killed by signal " + std::to_string(run.signal));
  }
  if (!session.return_value()) {
    return ErrorObject("E_PROGRAM_ERROR", "the program ended (exit code " + std::to_string(run.exit_code) +
                                              ") without returning a result");
  }
  if (run.status != RunStatus::kOk) {
    return ErrorObject("E_PROGRAM_ERROR", "the program exited with code " + std::to_string(run.exit_code));
  }
  return std::nullopt;
}

}  // namespace

ExecuteTool::ExecuteTool(gateway::Gateway& gateway, runtimes::CodeExecutor& executor, const Access& access,
                         audit::AuditLog* audit, codemode::Limits admin_limits, uint64_t max_code_bytes)
    : gateway_(gateway),
      executor_(executor),
      access_(access),
      audit_(audit),
      admin_limits_(admin_limits),
      max_code_bytes_(max_code_bytes) {}

json ExecuteTool::Definition() {
  const std::vector<std::string> names = gateway_.connector_names();
  return DefinitionWith(std::set<std::string>(names.begin(), names.end()));
}

json ExecuteTool::DefinitionFor(const governance::Caller& caller) {
  return DefinitionWith(access_.VisibleConnectors(caller));
}

json ExecuteTool::DefinitionWith(const std::set<std::string>& visible) {
  json definition = BaseDefinition(visible);
  if (sessions_ == nullptr) definition["inputSchema"]["properties"].erase("session_id");
  return definition;
}

json ExecuteTool::BaseDefinition(const std::set<std::string>& visible) {
  std::string connectors;
  for (const std::string& c : visible) connectors += (connectors.empty() ? "" : ", ") + c;
  if (connectors.empty()) connectors = "none configured";
  const codemode::Limits& l = admin_limits_;
  json limit_props = json::object();
  const json limits_json = l.ToJson();  // items() must not outlive the JSON it walks
  for (const auto& [key, value] : limits_json.items()) {
    limit_props[key] = {{"type", "integer"}, {"minimum", 1}, {"maximum", value}};
  }
  return {
      {"name", name()},
      {"title", "Execute a program that calls tools"},
      {"description",
       "Run a short JavaScript or Python program that calls the tools of connected MCP servers (" + connectors +
           ") through one global, `tools`, and return its result as JSON. Use it to chain or fan out many "
           "tool calls in one step. JavaScript (async body; top-level await and return work; the last "
           "expression is the value): `const r = await tools.search(\"issue\"); const d = await "
           "tools.describe(r.tools[0].name); return await tools.call(\"github.get_issue\", {number: 1});` "
           "Python (the last expression or a `result` variable is the value): `tools.call(\"memory.read_graph\", "
           "{})`, or `await tools.acall(...)` with asyncio.gather for concurrency. A tool result comes back as "
           "its structured content, else parsed JSON text, else text; a failing call raises ToolError with "
           ".code and .message, which the program can catch. Only read-only tools may be called. The program "
           "has no network, files or environment: only `tools` and console output (returned separately). "
           "Limits per run: " + std::to_string(l.wall_ms / 1000) + " s, " + std::to_string(l.max_calls) +
           " tool requests, " + std::to_string(l.max_concurrent) + " concurrent calls, " +
           ExactBytes(l.max_args_bytes) + " of arguments per call, " +
           ExactBytes(l.max_result_bytes) + " per result and return value, " +
           ExactBytes(l.max_console_bytes) + " of console output."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"language", {{"type", "string"}, {"enum", [this] {
                          json langs = json::array();
                          for (const char* l : {"javascript", "python"}) {
                            if (CodeModeTierRefusal(access_.endpoint(), l).empty()) langs.push_back(l);
                          }
                          return langs;
                        }()}}},
          {"code", {{"type", "string"}, {"description", "The program."}, {"maxLength", max_code_bytes_}}},
          {"connectors",
           {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"uniqueItems", true},
            {"description", "Connectors the program may use (default: all). Others do not exist for it."}}},
          {"limits",
           {{"type", "object"},
            {"properties", std::move(limit_props)},
            {"additionalProperties", false},
            {"description", "Lower limits for this run (they can only be lowered)."}}},
          {"session_id",
           {{"type", "string"},
            {"description", "Run the program as the next cell of a code-mode session (open_session with mode "
                            "\"codemode\"): Python variables, and JavaScript globals (globalThis, var, a "
                            "cell's top-level let/const without await), persist between cells, so one cell can "
                            "load tool data and later cells work on it."}}}}},
        {"required", {"language", "code"}},
        {"additionalProperties", false}}},
      {"annotations",
       {{"title", "Execute a program that calls tools"},
        {"readOnlyHint", true},  // programs may call read-only tools only
        {"destructiveHint", false},
        {"idempotentHint", false},
        {"openWorldHint", true}}}};
}

StatusOr<json> ExecuteTool::Call(const json& arguments, ToolCallContext& ctx) {
  if (!arguments.is_object()) return InvalidArgument("arguments must be an object");
  for (const auto& [key, value] : arguments.items()) {
    if (key != "language" && key != "code" && key != "connectors" && key != "limits" && key != "session_id") {
      return InvalidArgument("unknown argument \"" + key + "\"");
    }
  }
  auto language = arguments.find("language");
  if (language == arguments.end() || !language->is_string()) return InvalidArgument("language must be a string");
  auto code = arguments.find("code");
  if (code == arguments.end() || !code->is_string()) return InvalidArgument("code must be a string");
  const std::string lang = language->get<std::string>();
  auto refuse = [&](const std::string& message) {
    json value = {{"ok", false}, {"result", nullptr}, {"error", ErrorObject("E_INVALID_REQUEST", message)},
                  {"language", lang}};
    json out = StructuredResult(value);
    out["content"][0]["text"] = "E_INVALID_REQUEST: " + message;
    out["isError"] = true;
    return out;
  };
  if (lang != "javascript" && lang != "python") {
    return refuse("execute runs \"javascript\" or \"python\", not \"" + SanitizeUtf8(lang.substr(0, 64)) + "\"");
  }
  if (std::string why = CodeModeTierRefusal(access_.endpoint(), lang); !why.empty()) return refuse(why);
  if (code->get_ref<const std::string&>().size() > max_code_bytes_) {
    return refuse("code is larger than " + std::to_string(max_code_bytes_) + " bytes");
  }

  if (const governance::Role* role = access_.RoleOf(ctx.caller()); role == nullptr || !role->inline_code) {
    return refuse("your role may not run programs");
  }
  auto connectors = arguments.find("connectors");
  StatusOr<codemode::Grants> grants =
      access_.InlineGrants(ctx.caller(), connectors == arguments.end() ? json() : *connectors);
  if (!grants.ok()) {
    if (grants.status().code() == StatusCode::kInvalidArgument) return grants.status();
    return refuse(grants.status().message());
  }
  // Inline programs never call write tools (docs/governance.md): grants
  // carry no write connectors.
  // A task's run (io.modelcontextprotocol/tasks) may ask a wall clock up to
  // tasks.max_timeout_ms; one that asks none keeps the configured default.
  codemode::Limits cap = admin_limits_;
  const json asked = arguments.contains("limits") ? arguments["limits"] : json();
  if (ctx.task_max_timeout_ms() > cap.wall_ms && asked.is_object() && asked.contains("wall_ms")) {
    cap.wall_ms = ctx.task_max_timeout_ms();
  }
  StatusOr<codemode::Limits> limits = codemode::ApplyCallerLimits(cap, asked);
  if (!limits.ok()) return refuse(limits.status().message());

  ctx.Log(LogLevel::kInfo, "execute: starting " + lang + " with connectors [" +
                               [&] {
                                 std::string s;
                                 for (const auto& c : grants->connectors) s += (s.empty() ? "" : ", ") + c;
                                 return s;
                               }() + "]");
  ProgramSpec spec;
  spec.language = lang;
  spec.code = code->get<std::string>();
  spec.grants = std::move(*grants);
  spec.limits = *limits;
  spec.kind = "inline";
  if (auto id = arguments.find("session_id"); id != arguments.end()) {
    if (!id->is_string()) return InvalidArgument("session_id must be a string");
    return RunInSession(id->get<std::string>(), std::move(spec), ctx);
  }
  json out = RunProgram(gateway_, executor_, audit_, spec, ctx);
  const json& value = out["structuredContent"];
  ctx.Log(out.value("isError", false) ? LogLevel::kNotice : LogLevel::kInfo,
          "execute: " + lang + " finished: " +
              (value.value("ok", false) ? std::string("ok") : value["error"].value("code", std::string("error"))));
  return out;
}

StatusOr<json> ExecuteTool::RunInSession(const std::string& id, ProgramSpec spec, ToolCallContext& ctx) {
  const json where = {{"session_id", SanitizeUtf8(id.substr(0, 64))}, {"language", spec.language}};
  if (sessions_ == nullptr) return CodeModeErrorResult("E_INVALID_REQUEST", "this endpoint has no sessions", where);
  StatusOr<sessions::SessionInfo> s = sessions_->BeginCall(SessionOwner(ctx.caller()), id);
  if (!s.ok()) return CodeModeErrorResult("E_SESSION_NOT_FOUND", s.status().message(), where);
  sessions::ScopedCall running(*sessions_, id);  // counted as running in the session until it returns
  if (s->mode != "codemode") {
    return CodeModeErrorResult("E_INVALID_REQUEST",
                               "session " + id + " is not a code-mode session: run its cells with run_code, or open "
                               "one with open_session {\"mode\": \"codemode\"}", where);
  }
  if (s->language != spec.language) {
    return CodeModeErrorResult("E_INVALID_REQUEST", "this session runs " + s->language + ", not " + spec.language,
                               where);
  }
  if (!s->lost_reason.empty()) {
    return CodeModeErrorResult("E_SESSION_LOST", "the session was lost: " + s->lost_reason +
                                                     "; its state is gone, open a new session", where);
  }
  spec.session_id = id;
  spec.kind = "session";
  std::string lost;
  spec.on_run = [&](runtimes::RunResult& run) {
    sessions_->NoteResult(id, run);  // E_SESSION_NOT_FOUND from a restarted runner becomes E_SESSION_LOST
    if (run.error_code == "E_SESSION_LOST") lost = run.message;
  };
  json out = RunProgram(gateway_, executor_, audit_, spec, ctx);
  out["structuredContent"]["session_id"] = id;
  if (!lost.empty()) out["structuredContent"]["session_lost"] = lost;
  return out;
}

json BuildExecuteResult(const std::string& language, const runtimes::RunResult& run,
                        const codemode::BridgeSession& session, const codemode::Limits& limits, bool deadline_passed) {
  std::optional<json> error = RunError(run, session, deadline_passed);
  std::string stdout_text = run.stdout_text, stderr_text = run.stderr_text;
  if (run.stdout_truncated) stdout_text += Marker(limits.max_console_bytes);
  if (run.stderr_truncated) stderr_text += Marker(limits.max_console_bytes);

  json log = json::array();
  const std::vector<codemode::CallRecord> calls = session.calls();
  for (const codemode::CallRecord& c : calls) {
    if (log.size() >= kMaxLoggedCalls) break;
    log.push_back({{"seq", c.seq},
                   {"op", c.op},
                   {"name", c.name},
                   {"decision", c.decision},
                   {"error_code", c.error_code},
                   {"duration_ms", c.duration_ms}});
  }
  json value = {{"ok", !error.has_value()},
                {"result", !error && session.return_value() ? *session.return_value() : json()},
                {"stdout", stdout_text},
                {"stderr", stderr_text},
                {"console_truncated", run.stdout_truncated || run.stderr_truncated},
                {"calls", {{"total", session.calls_total()}, {"denied", session.calls_denied()}, {"log", log}}},
                {"language", language},
                {"wall_ms", run.wall_ms},
                {"limits", limits.ToJson()}};
  if (error) value["error"] = *error;

  std::string text;
  if (error) {
    text = (*error)["code"].get<std::string>() + ": " + (*error)["message"].get<std::string>();
  } else {
    text = value["result"].dump(2, ' ', false, json::error_handler_t::replace);
  }
  if (!stdout_text.empty()) text += "\n--- stdout ---\n" + stdout_text;
  if (!stderr_text.empty()) text += "\n--- stderr ---\n" + stderr_text;
  json out = {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"structuredContent", std::move(value)}};
  if (error) out["isError"] = true;
  return out;
}

}  // namespace airlock::mcp
