#include "mcp/tools/session_tools.h"

#include <algorithm>

#include "base/encoding.h"
#include "mcp/tools/program_run.h"

namespace airlock::mcp {

using nlohmann::json;

std::string SessionOwner(const governance::Caller& caller) { return caller.identity(); }

json SessionErrorResult(const std::string& error_code, const std::string& message, const std::string& session_id) {
  json structured = {{"status", "internal_error"}, {"error_code", error_code}, {"message", message}};
  if (!session_id.empty()) structured["session_id"] = session_id;
  return {{"content", json::array({{{"type", "text"}, {"text", error_code + ": " + message}}})},
          {"structuredContent", std::move(structured)},
          {"isError", true}};
}

namespace {

const json kSessionId = {{"type", "string"}, {"description", "The id open_session returned."}};

json Annotations(const char* title, bool read_only) {
  return {{"title", title}, {"readOnlyHint", read_only}, {"destructiveHint", false}, {"idempotentHint", false},
          {"openWorldHint", false}};
}

// Reads arguments.session_id; InvalidArgument when missing or not a string.
StatusOr<std::string> SessionIdArg(const json& args) {
  if (!args.is_object()) return InvalidArgument("arguments: expected an object with session_id");
  for (const auto& [key, value] : args.items()) {
    if (key != "session_id") return InvalidArgument("arguments." + key + ": unknown property");
  }
  auto it = args.find("session_id");
  if (it == args.end()) return InvalidArgument("arguments.session_id: required");
  if (!it->is_string()) return InvalidArgument("arguments.session_id: expected string");
  return it->get<std::string>();
}

// Which sessions the checkpoint tools work on, for descriptions and errors.
constexpr const char kPausableSessions[] =
    "Only sessions of the WASM tier's Python (open_session {\"language\": \"python\", \"isolation\": \"wasm\"}) "
    "can be paused, resumed or forked";

// A checkpoint's refusal (sessions::SessionRegistry::Pause, Resume, Fork)
// as a tool error.
json CheckpointErrorResult(const Status& st, const std::string& id) {
  const std::string code = sessions::SessionErrorCode(st, "E_SESSION_CHECKPOINT_FAILED");
  std::string message = sessions::SessionErrorMessage(st);
  if (code == "E_SESSION_NOT_PAUSABLE") {
    message += "; the session goes on as it was. " + std::string(kPausableSessions) + ".";
  } else if (code == "E_SESSION_CHECKPOINT_FAILED") {
    message += "; the session goes on as it was";
  }
  return SessionErrorResult(code, message, id);
}

}  // namespace

json OpenSessionTool::Definition() {
  json names = json::array();
  for (const runtimes::LanguageInfo& l : catalog_.Languages()) {
    if (l.sessions) names.push_back(l.name);
  }
  json language = {{"type", "string"}, {"description", "The interpreter to keep running."}};
  if (!names.empty()) language["enum"] = names;
  const config::SessionsConfig& c = registry_.config();
  return {{"name", name()},
          {"title", "Open a session"},
          {"description",
           "Start a persistent interpreter in its own isolated sandbox, for step-by-step work: variables, "
           "imports, functions and files in /work persist between run_code calls that pass the returned "
           "session_id (like notebook cells; in Python the last expression's value is shown). Languages: " +
               (names.empty() ? std::string("none available right now") : names.dump()) +
               ". A session ends when closed, after " + std::to_string(c.idle_timeout_s) +
               " s idle by default (timeout_s up to " + std::to_string(c.max_idle_timeout_s) + "), after " +
               std::to_string(c.max_lifetime_s) +
               " s in all, or when a call times out, runs out of memory or crashes the interpreter. At most " +
               std::to_string(c.max_per_caller) + " open sessions per caller."},
          {"inputSchema",
           {{"type", "object"},
            {"properties",
             {{"language", std::move(language)},
              {"isolation",
               {{"type", "string"},
                {"enum", catalog_.allowed_tiers()},
                {"description", "The tier the session runs in (list_languages: session_tiers); by default the "
                                "server's default tier when the language has sessions there."}}},
              {"timeout_s",
               {{"type", "integer"},
                {"minimum", 1},
                {"maximum", c.max_idle_timeout_s},
                {"description", "Idle timeout in seconds."}}},
              {"memory_mb",
               {{"type", "integer"},
                {"minimum", 1},
                {"maximum", catalog_.limits().max_memory_mb},
                {"description", "Memory limit in MiB for the whole session."}}},
              {"mode",
               {{"type", "string"},
                {"enum", code_mode_ ? json{"interpreter", "codemode"} : json{"interpreter"}},
                {"description",
                 code_mode_ ? "\"interpreter\" (default): cells run with run_code. \"codemode\" (javascript or "
                              "python): cells run with execute {language, code, session_id} and get `tools` "
                              "(search/describe/call of the connected MCP servers), so one cell can load tool data "
                              "into a variable and later cells keep working on it; the bridge is open only while "
                              "a cell runs, and code mode's rules, limits and audit apply to every cell."
                            : "\"interpreter\": cells run with run_code."}}}}},
            {"required", {"language"}},
            {"additionalProperties", false}}},
          {"annotations", Annotations("Open a session", true)}};
}

StatusOr<json> OpenSessionTool::Call(const json& args, ToolCallContext& ctx) {
  if (!args.is_object()) return InvalidArgument("arguments: expected an object with language");
  for (const auto& [key, value] : args.items()) {
    if (key != "language" && key != "isolation" && key != "timeout_s" && key != "memory_mb" && key != "mode") {
      return InvalidArgument("arguments." + key + ": unknown property");
    }
  }
  auto lang = args.find("language");
  if (lang == args.end()) return InvalidArgument("arguments.language: required");
  if (!lang->is_string()) return InvalidArgument("arguments.language: expected string");
  sessions::OpenRequest request;
  request.endpoint = ctx.caller().endpoint;
  request.language = lang->get<std::string>();
  if (auto iso = args.find("isolation"); iso != args.end()) {
    if (!iso->is_string()) return InvalidArgument("arguments.isolation: expected string");
    request.isolation = iso->get<std::string>();
  }
  if (auto mode = args.find("mode"); mode != args.end()) {
    if (!mode->is_string()) return InvalidArgument("arguments.mode: expected string");
    const std::string m = mode->get<std::string>();
    if (m == "codemode") {
      request.mode = m;
    } else if (m != "interpreter") {
      return InvalidArgument("arguments.mode: expected \"interpreter\" or \"codemode\"");
    }
  }
  if (request.mode == "codemode") {
    if (!code_mode_) {
      return SessionErrorResult("invalid_request",
                                "code-mode sessions need code mode (the execute tool), which this endpoint does not "
                                "offer");
    }
    if (request.language != "python" && request.language != "javascript") {
      return SessionErrorResult("invalid_request", "code-mode sessions run javascript or python, as execute does");
    }
    if (std::string why = CodeModeTierRefusal(*endpoint_, request.language); !why.empty()) {
      return SessionErrorResult("invalid_request", why);
    }
    // The tier execute runs the language in (javascript: the embedded engine).
    const std::string tier = CodeModeTierOf(request.language);
    if (auto iso = args.find("isolation"); iso != args.end() && *iso != tier) {
      return SessionErrorResult("invalid_request",
                                "code-mode " + request.language + " sessions run in the " + tier + " tier");
    }
  }
  for (const char* key : {"timeout_s", "memory_mb"}) {
    auto it = args.find(key);
    if (it == args.end()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1) {
      return InvalidArgument(std::string("arguments.") + key + ": expected a positive integer");
    }
    (std::string(key) == "timeout_s" ? request.idle_timeout_s : request.memory_mb) = it->get<uint64_t>();
  }
  const std::vector<runtimes::LanguageInfo> languages = catalog_.Languages();
  if (languages.empty()) {
    return SessionErrorResult("runner_unavailable", "no code runner is available right now (none answered)");
  }
  auto info = std::find_if(languages.begin(), languages.end(),
                           [&](const runtimes::LanguageInfo& l) { return l.name == request.language; });
  if (info == languages.end() || !info->sessions) {
    std::string with;
    for (const runtimes::LanguageInfo& l : languages) {
      if (l.sessions) with += (with.empty() ? "" : ", ") + l.name;
    }
    return SessionErrorResult(info == languages.end() ? "unknown_language" : "invalid_request",
                              "sessions are not available for \"" + SanitizeUtf8(request.language.substr(0, 64)) +
                                  "\"; languages with sessions: " + (with.empty() ? "none" : with));
  }
  // Not empty: the catalog sets `sessions` exactly when it is not (languages.h).
  const std::vector<std::string>& tiers = info->session_tiers;
  if (request.mode == "codemode") {
    request.isolation = CodeModeTierOf(request.language);
  } else if (args.find("isolation") == args.end()) {
    const bool preferred = std::find(tiers.begin(), tiers.end(), catalog_.default_tier()) != tiers.end();
    request.isolation = preferred ? catalog_.default_tier() : tiers.front();
  } else if (std::find(tiers.begin(), tiers.end(), request.isolation) == tiers.end()) {
    std::string list;
    for (const std::string& t : tiers) list += (list.empty() ? "" : ", ") + t;
    return SessionErrorResult("invalid_request", "sessions for " + request.language + " are not available in isolation \"" +
                                                     SanitizeUtf8(request.isolation.substr(0, 32)) +
                                                     "\" here; available: " + list);
  }
  if (request.memory_mb > catalog_.limits().max_memory_mb) {
    return SessionErrorResult("invalid_request", "memory_mb " + std::to_string(request.memory_mb) +
                                                     " exceeds the maximum of " +
                                                     std::to_string(catalog_.limits().max_memory_mb));
  }
  if (request.memory_mb == 0) {
    const uint64_t tier_memory = info->DefaultMemoryMb(request.isolation);
    request.memory_mb = tier_memory ? std::min(tier_memory, catalog_.limits().max_memory_mb)
                                    : catalog_.limits().default_memory_mb;
  }
  // Code mode's Python has the standard library only (as execute's).
  if (request.mode.empty()) request.packages = catalog_.packages().DirsFor(request.language, request.isolation);
  StatusOr<sessions::SessionInfo> s = registry_.Open(SessionOwner(ctx.caller()), request);
  if (!s.ok()) {
    const Status& st = s.status();
    const char* code = st.code() == StatusCode::kResourceExhausted ? "E_SESSION_LIMIT"
                       : st.code() == StatusCode::kUnavailable  ? "runner_unavailable"
                       : st.code() == StatusCode::kNotFound     ? "unknown_language"
                       : st.code() == StatusCode::kInvalidArgument ? "invalid_request"
                                                                   : "jail_setup_failed";
    return SessionErrorResult(code, st.message());
  }
  json out = sessions::ToJson(*s, registry_.config());
  ctx.Log(LogLevel::kInfo, "open_session: " + s->language + " session " + s->id);
  return json{{"content", json::array({{{"type", "text"},
                                         {"text", "Opened a " + s->language + " session: session_id " + s->id +
                                                      " (idle timeout " + std::to_string(s->idle_timeout_s) +
                                                      " s, expires at " + out["expires_at"].get<std::string>() +
                                                      "). Pass it to " +
                                                      (s->mode == "codemode"
                                                           ? "execute {language: \"" + s->language +
                                                                 "\", code, session_id}"
                                                           : std::string("run_code")) +
                                                      "; close it with close_session."}}})},
              {"structuredContent", std::move(out)}};
}

json CloseSessionTool::Definition() {
  return {{"name", name()},
          {"title", "Close a session"},
          {"description", "End a session opened with open_session: its interpreter, files and sandbox are destroyed."},
          {"inputSchema",
           {{"type", "object"},
            {"properties", {{"session_id", kSessionId}}},
            {"required", {"session_id"}},
            {"additionalProperties", false}}},
          {"annotations", Annotations("Close a session", false)}};
}

StatusOr<json> CloseSessionTool::Call(const json& args, ToolCallContext& ctx) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string id, SessionIdArg(args));
  Status st = registry_.Close(SessionOwner(ctx.caller()), id);
  if (st.code() == StatusCode::kNotFound) return SessionErrorResult("E_SESSION_NOT_FOUND", st.message(), id);
  if (!st.ok()) return SessionErrorResult("runner_unavailable", st.message(), id);
  return json{{"content", json::array({{{"type", "text"}, {"text", "Closed session " + id + "."}}})},
              {"structuredContent", {{"session_id", id}, {"closed", true}}}};
}

json PauseSessionTool::Definition() {
  const std::string description =
      pause_ ? "Pause a session opened with open_session: its whole state (variables, imports, files) is saved and "
               "its sandbox destroyed, so it holds no memory while you do not need it. The next run_code with its "
               "session_id (or resume_session) brings it back where it was. " +
                   std::string(kPausableSessions) + "; others are refused (E_SESSION_NOT_PAUSABLE) and go on."
             : "Bring a paused session (pause_session) back now, so its next run_code starts at once (run_code "
               "also resumes it by itself). A session that is not paused is left as it is. " +
                   std::string(kPausableSessions) + ".";
  const char* title = pause_ ? "Pause a session" : "Resume a session";
  return {{"name", name()},
          {"title", title},
          {"description", description},
          {"inputSchema",
           {{"type", "object"},
            {"properties", {{"session_id", kSessionId}}},
            {"required", {"session_id"}},
            {"additionalProperties", false}}},
          {"annotations", Annotations(title, false)}};
}

StatusOr<json> PauseSessionTool::Call(const json& args, ToolCallContext& ctx) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string id, SessionIdArg(args));
  const std::string owner = SessionOwner(ctx.caller());
  if (Status st = pause_ ? registry_.Pause(owner, id) : registry_.Resume(owner, id); !st.ok()) {
    return CheckpointErrorResult(st, id);
  }
  ctx.Log(LogLevel::kInfo, name() + ": session " + id);
  return json{{"content", json::array({{{"type", "text"},
                                         {"text", (pause_ ? "Paused session " : "Resumed session ") + id + "."}}})},
              {"structuredContent", {{"session_id", id}, {"paused", pause_}}}};
}

json ForkSessionTool::Definition() {
  return {{"name", name()},
          {"title", "Fork a session"},
          {"description",
           "Copy a session: a new session, with its own session_id and sandbox, starts with the source's "
           "variables, imports and files, and the two go their own ways (try something risky in the copy, keep "
           "the original). The source, paused or not, is left as it was. The copy counts as an open session "
           "and has its own idle timeout and lifetime from now. " +
               std::string(kPausableSessions) + "."},
          {"inputSchema",
           {{"type", "object"},
            {"properties", {{"session_id", kSessionId}}},
            {"required", {"session_id"}},
            {"additionalProperties", false}}},
          {"annotations", Annotations("Fork a session", true)}};
}

StatusOr<json> ForkSessionTool::Call(const json& args, ToolCallContext& ctx) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string id, SessionIdArg(args));
  StatusOr<sessions::SessionInfo> s = registry_.Fork(SessionOwner(ctx.caller()), id);
  if (!s.ok()) return CheckpointErrorResult(s.status(), id);
  json out = sessions::ToJson(*s, registry_.config());
  out["forked_from"] = id;
  ctx.Log(LogLevel::kInfo, "fork_session: session " + s->id + " from " + id);
  return json{{"content", json::array({{{"type", "text"},
                                         {"text", "Forked session " + id + " into session_id " + s->id +
                                                      " (idle timeout " + std::to_string(s->idle_timeout_s) +
                                                      " s, expires at " + out["expires_at"].get<std::string>() +
                                                      "); both go on independently."}}})},
              {"structuredContent", std::move(out)}};
}

json ListSessionsTool::Definition() {
  return {{"name", name()},
          {"title", "List sessions"},
          {"description", "Your open sessions (open_session), with their language and when each expires."},
          {"inputSchema", {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}}},
          {"annotations", Annotations("List sessions", true)}};
}

StatusOr<json> ListSessionsTool::Call(const json& args, ToolCallContext& ctx) {
  if (!args.is_null() && !(args.is_object() && args.empty())) {
    if (!args.is_object()) return InvalidArgument("arguments: expected an object");
    return InvalidArgument("arguments." + args.begin().key() + ": unknown property");
  }
  json list = json::array();
  for (const sessions::SessionInfo& s : registry_.List(SessionOwner(ctx.caller()))) {
    json entry = sessions::ToJson(s, registry_.config());
    if (!s.lost_reason.empty()) entry["lost"] = s.lost_reason;
    list.push_back(std::move(entry));
  }
  const size_t n = list.size();
  return json{{"content", json::array({{{"type", "text"}, {"text", std::to_string(n) + " open session(s): " + list.dump()}}})},
              {"structuredContent", {{"sessions", std::move(list)}}}};
}

}  // namespace airlock::mcp
