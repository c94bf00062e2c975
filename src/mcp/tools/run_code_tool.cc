#include "mcp/tools/run_code_tool.h"

#include <algorithm>
#include <cstdio>

#include "base/byte_size.h"
#include "base/encoding.h"
#include "mcp/tools/run_code_args.h"
#include "mcp/tools/run_code_result.h"
#include "mcp/tools/session_tools.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using runtimes::RunPhase;

// Progress steps reported for each phase (total kPhaseCount).
constexpr double kPhaseCount = 5;
double PhaseStep(RunPhase p) {
  switch (p) {
    case RunPhase::kQueued: return 1;
    case RunPhase::kStarting: return 2;
    case RunPhase::kCompiling: return 3;
    case RunPhase::kRunning: return 4;
    case RunPhase::kDone: return 5;
  }
  return 0;
}
const char* PhaseMessage(RunPhase p) {
  switch (p) {
    case RunPhase::kQueued: return "queued";
    case RunPhase::kStarting: return "starting";
    case RunPhase::kCompiling: return "compiling";
    case RunPhase::kRunning: return "running";
    case RunPhase::kDone: return "done";
  }
  return "";
}

std::string Seconds(uint64_t ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", ms / 1000.0);
  return buf;
}

// A tool error that still carries a RunResult, so structuredContent matches
// the outputSchema.
json RefusedResult(const std::string& language, const std::string& error_code, const std::string& message) {
  runtimes::RunResult r;
  r.status = runtimes::RunStatus::kInternalError;
  r.error_code = error_code;
  r.language = language;
  r.message = message;
  json out = BuildRunCodeResult(r);
  out["content"] = json::array({{{"type", "text"}, {"text", message}}});
  return out;
}

}  // namespace

json RunCodeTool::InputSchema(const std::vector<runtimes::LanguageInfo>& languages,
                              const config::LimitsConfig& limits, const std::vector<std::string>& tiers,
                              const std::string& default_tier) {
  // Not in "required": a session's cell may leave it out. Without a
  // session_id, ParseRunCodeArguments refuses a call that lacks it.
  json language = {{"type", "string"},
                   {"description", "Language to run (see list_languages). Required unless session_id is given."}};
  if (!languages.empty()) {
    json names = json::array();
    for (const runtimes::LanguageInfo& l : languages) names.push_back(l.name);
    language["enum"] = std::move(names);
  }
  json file = {{"type", "object"},
               {"properties",
                {{"name", {{"type", "string"}, {"description", "Path relative to /work, e.g. data/in.csv"}}},
                 {"content", {{"type", "string"}}},
                 {"encoding", {{"type", "string"}, {"enum", {"text", "base64"}}, {"default", "text"}}}}},
               {"required", {"name", "content"}},
               {"additionalProperties", false}};
  return {
      {"type", "object"},
      {"properties",
       {{"language", std::move(language)},
        {"code", {{"type", "string"}, {"description", "The complete program source."}}},
        {"stdin", {{"type", "string"}, {"description", "Text fed to standard input."}}},
        {"args", {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "Command-line arguments."}}},
        {"files",
         {{"type", "array"},
          {"items", std::move(file)},
          {"maxItems", limits.max_files},
          {"description", "Input files written to /work before the run."}}},
        {"output_files",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"description", "Files to return after the run: names or globs relative to /work, e.g. \"*.png\"."}}},
        {"timeout_ms",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", limits.max_timeout_ms},
          {"description", "Wall-clock limit in milliseconds."}}},
        {"memory_mb",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", limits.max_memory_mb},
          {"description", "Memory limit in MiB."}}},
        {"session_id",
         {{"type", "string"},
          {"description",
           "Run as the next cell of this open session (open_session): variables, imports and files persist. "
           "language may then be left out; args, memory_mb and isolation are not allowed."}}},
        {"isolation",
         {{"type", "string"},
          {"enum", tiers},
          {"default", default_tier},
          {"description",
           "Isolation tier: native (a process in the jail) or wasm (inside the embedded engine, itself in the "
           "jail; see list_languages for which languages have it). Default: " + default_tier +
               " where the language has it, else its other tier."}}}}},
      {"required", {"code"}},
      {"additionalProperties", false}};
}

std::string RunCodeTool::Description(const std::vector<runtimes::LanguageInfo>& languages,
                                     const config::LimitsConfig& limits) {
  std::string langs;
  for (const runtimes::LanguageInfo& l : languages) {
    if (!langs.empty()) langs += "; ";
    langs += l.name;
    if (!l.version.empty()) langs += " " + l.version;
    if (!l.notes.empty()) langs += " (" + l.notes + ")";
    if (!l.tiers.empty() && l.tiers != std::vector<std::string>{"native"}) {
      std::string tiers;
      for (const std::string& t : l.tiers) tiers += (tiers.empty() ? "" : ", ") + t;
      langs += " [isolation: " + tiers + "]";
    }
  }
  if (langs.empty()) langs = "none available right now";
  return "Run a program in an isolated, throwaway Linux sandbox and get its stdout, stderr, exit "
         "status and any files it writes. Languages: " + langs +
         ". No network access and no package installation: only the standard library and the "
         "libraries listed are available. The working directory is /work: `files` are written "
         "there first, and `output_files` (names or globs) are returned afterwards; images "
         "(png, jpeg, gif, webp) come back as images. Nothing persists between calls, unless they pass the session_id of a "
         "session (open_session), whose interpreter and files persist. Limits: " +
         Seconds(limits.default_timeout_ms) + " s wall time by default (timeout_ms up to " +
         std::to_string(limits.max_timeout_ms) + "), " + std::to_string(limits.default_memory_mb) +
         " MiB memory by default (memory_mb up to " + std::to_string(limits.max_memory_mb) + "), " +
         ExactBytes(limits.max_output_bytes) + " of stdout/stderr each.";
}

json RunCodeTool::Definition() {
  std::vector<runtimes::LanguageInfo> languages = catalog_.Languages();
  return {{"name", name()},
          {"title", "Run code"},
          {"description", Description(languages, catalog_.limits())},
          {"inputSchema", InputSchema(languages, catalog_.limits(), catalog_.allowed_tiers(), catalog_.default_tier())},
          {"outputSchema", RunResultOutputSchema()},
          // Runs are isolated and ephemeral: nothing in the caller's
          // environment changes, nothing persists and there is no network.
          {"annotations",
           {{"title", "Run code"},
            {"readOnlyHint", true},
            {"destructiveHint", false},
            {"idempotentHint", false},
            {"openWorldHint", false}}}};
}

namespace {

// SUCCESS for a run that exited 0, TIMEOUT, LIMIT (memory, output),
// CANCELLED, else ERROR (non-zero exit, signal, compile error, internal).
std::string AuditStatusOfRun(const runtimes::RunResult& r) {
  switch (r.status) {
    case runtimes::RunStatus::kOk: return "SUCCESS";
    case runtimes::RunStatus::kTimeout: return "TIMEOUT";
    case runtimes::RunStatus::kMemoryLimit:
    case runtimes::RunStatus::kOutputLimit: return "LIMIT";
    case runtimes::RunStatus::kInternalError: return r.error_code == "cancelled" ? "CANCELLED" : "ERROR";
    default: return "ERROR";
  }
}

}  // namespace

Status RunCodeTool::AuditRun(const runtimes::RunRequest& request, const runtimes::RunResult& result,
                             ToolCallContext& ctx, int64_t started_ms, const std::string& kind) {
  if (audit_ == nullptr || !audit_->enabled()) return OkStatus();
  const governance::Caller& who = ctx.caller();
  audit::RunRecord rec;
  rec.run_id = ctx.run_id();
  rec.started_at = started_ms;
  rec.ended_at = audit::NowMs();
  rec.duration_ms = rec.ended_at - started_ms;
  rec.user = who.user;
  rec.role = who.role;
  rec.endpoint = who.endpoint;
  rec.client = who.client;
  rec.kind = kind;
  rec.language = request.language;
  rec.code = request.code;
  rec.code_sha256 = Sha256Hex(request.code);
  rec.limits = {{"timeout_ms", request.timeout_ms}, {"memory_mb", request.memory_mb}};
  if (!request.session_id.empty()) rec.limits["session_id"] = request.session_id;
  rec.status = AuditStatusOfRun(result);
  rec.error_code = result.ok() ? "" : (result.error_code.rfind("E_", 0) == 0 ? result.error_code
                                                                             : runtimes::RunStatusName(result.status));
  rec.console_bytes = static_cast<int64_t>(result.stdout_text.size() + result.stderr_text.size());
  return audit_->EndRun(rec, {});
}

StatusOr<json> RunCodeTool::CallInSession(const json& arguments, ToolCallContext& ctx) {
  const std::string id = arguments["session_id"].get<std::string>();
  // Refusals keep run_code's result shape (its outputSchema), plus the id.
  auto refuse = [&](const std::string& language, const std::string& code, const std::string& message) {
    json out = RefusedResult(language, code, message);
    out["structuredContent"]["session_id"] = id;
    return out;
  };
  if (sessions_ == nullptr) {
    return refuse("", "E_SESSIONS_DISABLED", "sessions are turned off on this server or endpoint");
  }
  for (const char* key : {"args", "memory_mb", "isolation"}) {
    if (arguments.contains(key)) {
      return refuse("", "invalid_request",
                    std::string(key) + " is fixed when a session opens and is not allowed in a session call");
    }
  }
  StatusOr<sessions::SessionInfo> s = sessions_->BeginCall(SessionOwner(ctx.caller()), id);
  if (!s.ok()) return refuse("", "E_SESSION_NOT_FOUND", s.status().message());
  sessions::ScopedCall running(*sessions_, id);  // counted as running in the session until it returns
  runtimes::RunResult result;
  if (s->mode == "codemode") {
    return refuse(s->language, "invalid_request",
                  "this is a code-mode session: run its cells with execute {language: \"" + s->language +
                      "\", code, session_id}");
  }
  if (auto lang = arguments.find("language"); lang != arguments.end() && lang->is_string() &&
                                              lang->get<std::string>() != s->language) {
    return refuse(s->language, "invalid_request",
                  "this session runs " + s->language + ", not \"" + SanitizeUtf8(lang->get<std::string>().substr(0, 64)) +
                      "\"");
  }
  json args = arguments;
  args.erase("session_id");
  args["language"] = s->language;
  StatusOr<runtimes::RunRequest> request =
      ParseRunCodeArguments(args, catalog_.Languages(), catalog_.limits(),
                            TierRule{.allowed = {s->isolation}, .preferred = s->isolation});
  if (!request.ok()) {
    if (request.status().code() == StatusCode::kInvalidArgument) return request.status();
    return refuse(s->language, "invalid_request", request.status().message());
  }
  request->memory_mb = 0;  // the session's, fixed at open
  request->session_id = id;
  request->caller = SessionOwner(ctx.caller());
  const int64_t started_ms = audit::NowMs();
  if (!s->lost_reason.empty()) {
    result = runtimes::InternalErrorResult(s->language, "E_SESSION_LOST", s->lost_reason);
  } else {
    result = catalog_.executor().Run(
        *request, [&ctx](RunPhase p) { ctx.Progress(PhaseStep(p), kPhaseCount, PhaseMessage(p)); }, ctx.cancel());
    ctx.Progress(PhaseStep(RunPhase::kDone), kPhaseCount, PhaseMessage(RunPhase::kDone));
    // Noted now (E_SESSION_NOT_FOUND and runner_unavailable become E_SESSION_LOST).
    sessions_->NoteResult(id, result);
  }
  // A runner that no longer knows the session answers without its language
  // or tier: they are the session's.
  if (result.language.empty()) result.language = s->language;
  if (!result.error_code.empty()) result.isolation = s->isolation;
  request->memory_mb = s->memory_mb;
  if (Status st = AuditRun(*request, result, ctx, started_ms, "session_call"); !st.ok()) {
    return ToolErrorResult("E_AUDIT_UNAVAILABLE: the run finished but its audit record could not be written, so "
                           "its result is withheld: " + st.message());
  }
  json out = BuildRunCodeResult(result);
  out["structuredContent"]["session_id"] = id;
  return out;
}

StatusOr<json> RunCodeTool::Call(const json& arguments, ToolCallContext& ctx) {
  if (arguments.is_object() && arguments.contains("session_id")) {
    if (!arguments["session_id"].is_string()) return InvalidArgument("arguments.session_id: expected string");
    return CallInSession(arguments, ctx);
  }
  std::vector<runtimes::LanguageInfo> languages = catalog_.Languages();
  if (languages.empty()) {
    // No runner answered (the local runner is down, or no runner host is
    // usable): that is not the caller's unknown language.
    std::string lang = arguments.is_object() && arguments.contains("language") && arguments["language"].is_string()
                           ? arguments["language"].get<std::string>()
                           : "";
    // The runner's own account of why (e.g. "cannot run code on this host:
    // cgroup memory/pids controllers are not usable by uid 1000 ... Fix,
    // one of: ..."): a desktop client never shows airlock's stderr.
    const json health = catalog_.executor().Health();
    const auto error = health.is_object() ? health.find("error") : health.end();
    const std::string why = error != health.end() && error->is_string() && !error->get<std::string>().empty()
                                ? error->get<std::string>()
                                : "none answered";
    const std::string message = "no code runner is available right now (" + why + "); the run was not started";
    // A run that could not start is still a run: it gets its run row
    // (ERROR), like one the runner refuses once the languages are known.
    runtimes::RunRequest refused;
    refused.language = lang;
    if (arguments.is_object() && arguments.contains("code") && arguments["code"].is_string()) {
      refused.code = arguments["code"].get<std::string>();
    }
    refused.timeout_ms = catalog_.limits().default_timeout_ms;
    refused.memory_mb = catalog_.limits().default_memory_mb;
    const int64_t now_ms = audit::NowMs();
    if (Status st = AuditRun(refused, runtimes::InternalErrorResult(lang, "runner_unavailable", message), ctx,
                             now_ms, "run_code");
        !st.ok()) {
      return ToolErrorResult("E_AUDIT_UNAVAILABLE: the run could not start and its audit record could not be "
                             "written: " + st.message());
    }
    return RefusedResult(lang, "runner_unavailable", message);
  }
  config::LimitsConfig limits = catalog_.limits();
  limits.max_timeout_ms = std::max(limits.max_timeout_ms, ctx.task_max_timeout_ms());
  StatusOr<runtimes::RunRequest> request = ParseRunCodeArguments(
      arguments, languages, limits,
      TierRule{.allowed = catalog_.allowed_tiers(), .preferred = catalog_.default_tier()});
  if (!request.ok()) {
    if (request.status().code() == StatusCode::kInvalidArgument) return request.status();
    const std::string msg = request.status().message();
    const char* code = msg.rfind("unknown language", 0) == 0 ? "unknown_language" : "invalid_request";
    std::string lang = arguments.is_object() && arguments.contains("language") && arguments["language"].is_string()
                           ? arguments["language"].get<std::string>()
                           : "";
    return RefusedResult(lang, code, msg);
  }
  ctx.Log(LogLevel::kInfo, "run_code: starting " + request->language + " (timeout " +
                               std::to_string(request->timeout_ms) + " ms, memory " +
                               std::to_string(request->memory_mb) + " MiB)");
  request->caller = SessionOwner(ctx.caller());  // per-caller run limits
  request->packages = catalog_.packages().DirsFor(request->language, request->isolation);
  const int64_t started_ms = audit::NowMs();
  runtimes::RunResult result = catalog_.executor().Run(
      *request, [&ctx](RunPhase p) { ctx.Progress(PhaseStep(p), kPhaseCount, PhaseMessage(p)); },
      ctx.cancel());
  ctx.Progress(PhaseStep(RunPhase::kDone), kPhaseCount, PhaseMessage(RunPhase::kDone));
  ctx.Log(result.ok() ? LogLevel::kInfo : LogLevel::kNotice,
          "run_code: " + request->language + " finished: " + runtimes::RunStatusName(result.status) +
              " in " + std::to_string(result.wall_ms) + " ms" +
              (result.message.empty() ? "" : " (" + result.message + ")"));
  if (Status st = AuditRun(*request, result, ctx, started_ms, "run_code"); !st.ok()) {
    return ToolErrorResult("E_AUDIT_UNAVAILABLE: the run finished but its audit record could not be written, so "
                           "its result is withheld: " + st.message());
  }
  return BuildRunCodeResult(result);
}

}  // namespace airlock::mcp
