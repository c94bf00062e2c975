#include "runtimes/run_types.h"

#include <array>
#include <cctype>
#include <utility>

#include "base/encoding.h"

namespace airlock::runtimes {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<RunStatus, const char*>, 8> kStatusNames = {{
    {RunStatus::kOk, "ok"},
    {RunStatus::kExitNonzero, "exit_nonzero"},
    {RunStatus::kTimeout, "timeout"},
    {RunStatus::kMemoryLimit, "memory_limit"},
    {RunStatus::kOutputLimit, "output_limit"},
    {RunStatus::kCompileError, "compile_error"},
    {RunStatus::kKilledSignal, "killed_signal"},
    {RunStatus::kInternalError, "internal_error"},
}};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}


// True if `bytes` can travel as a JSON string unchanged.
bool IsPlainText(const std::string& bytes) {
  return bytes.find('\0') == std::string::npos && IsValidUtf8(bytes);
}

// Field readers: each leaves `out` untouched when the key is absent (unless
// `required`) and returns InvalidArgument naming `path` on a wrong type.
Status ReadString(const Json& j, const char* key, const std::string& path, bool required,
                  std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || (it->is_null() && !required)) {
    if (required) return InvalidArgument(path + " is required");
    return OkStatus();
  }
  if (!it->is_string()) return InvalidArgument(path + " must be a string");
  *out = it->get<std::string>();
  return OkStatus();
}

Status ReadBool(const Json& j, const char* key, const std::string& path, bool* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return OkStatus();
  if (!it->is_boolean()) return InvalidArgument(path + " must be a boolean");
  *out = it->get<bool>();
  return OkStatus();
}

Status ReadUint(const Json& j, const char* key, const std::string& path, uint64_t* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return OkStatus();
  if (it->is_number_unsigned()) {
    *out = it->get<uint64_t>();
    return OkStatus();
  }
  return InvalidArgument(path + " must be a non-negative integer");
}

Status ReadInt(const Json& j, const char* key, const std::string& path, int* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return OkStatus();
  if (!it->is_number_integer()) return InvalidArgument(path + " must be an integer");
  const int64_t v = it->get<int64_t>();
  if (v < INT32_MIN || v > INT32_MAX) return InvalidArgument(path + " is out of range");
  *out = static_cast<int>(v);
  return OkStatus();
}

Status ReadStringList(const Json& j, const char* key, const std::string& path,
                      std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return OkStatus();
  if (!it->is_array()) return InvalidArgument(path + " must be an array of strings");
  out->clear();
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& e = (*it)[i];
    if (!e.is_string()) {
      return InvalidArgument(path + "[" + std::to_string(i) + "] must be a string");
    }
    out->push_back(e.get<std::string>());
  }
  return OkStatus();
}

// Reads {"content": ..., "encoding": "text"|"base64"} at `path`.
Status ReadContent(const Json& j, const std::string& path, std::string* out) {
  std::string content, encoding = "text";
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "content", path + ".content", true, &content));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "encoding", path + ".encoding", false, &encoding));
  if (encoding == "text") {
    *out = std::move(content);
  } else if (encoding == "base64") {
    if (!Base64Decode(content, out)) {
      return InvalidArgument(path + ".content is not valid base64");
    }
  } else {
    return InvalidArgument(path + ".encoding must be \"text\" or \"base64\"");
  }
  return OkStatus();
}

std::vector<std::string> SanitizeAll(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const std::string& s : v) out.push_back(SanitizeUtf8(s));
  return out;
}

Status RequireObject(const Json& j, const std::string& what) {
  if (!j.is_object()) return InvalidArgument(what + " must be a JSON object");
  return OkStatus();
}

}  // namespace

std::string GuessMimeType(const std::string& name) {
  const size_t dot = name.rfind('.');
  const size_t slash = name.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return "application/octet-stream";
  }
  const std::string ext = Lower(name.substr(dot + 1));
  if (ext == "png") return "image/png";
  if (ext == "jpg" || ext == "jpeg") return "image/jpeg";
  if (ext == "gif") return "image/gif";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "json") return "application/json";
  if (ext == "csv") return "text/csv";
  if (ext == "txt") return "text/plain";
  if (ext == "html" || ext == "htm") return "text/html";
  if (ext == "pdf") return "application/pdf";
  return "application/octet-stream";
}

const char* RunStatusName(RunStatus s) {
  for (const auto& [status, name] : kStatusNames) {
    if (status == s) return name;
  }
  return "internal_error";
}

std::optional<RunStatus> RunStatusFromName(const std::string& name) {
  for (const auto& [status, n] : kStatusNames) {
    if (name == n) return status;
  }
  return std::nullopt;
}

const char* RunPhaseName(RunPhase p) {
  switch (p) {
    case RunPhase::kQueued: return "queued";
    case RunPhase::kStarting: return "starting";
    case RunPhase::kCompiling: return "compiling";
    case RunPhase::kRunning: return "running";
    case RunPhase::kDone: return "done";
  }
  return "done";
}

RunResult InternalErrorResult(const std::string& language, const std::string& error_code,
                              const std::string& message) {
  RunResult r;
  r.status = RunStatus::kInternalError;
  r.language = language;
  r.error_code = error_code;
  r.message = message;
  return r;
}

namespace {

Json NoticesToJson(const std::vector<FileNotice>& list) {
  Json out = Json::array();
  for (const FileNotice& n : list) {
    out.push_back({{"name", SanitizeUtf8(n.name)}, {"size", n.size}, {"reason", n.reason}});
  }
  return out;
}

Status ReadNotices(const Json& j, const char* key, std::vector<FileNotice>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return OkStatus();
  if (!it->is_array()) return InvalidArgument(std::string(key) + " must be an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    const Json& e = (*it)[i];
    AIRLOCK_RETURN_IF_ERROR(RequireObject(e, path));
    FileNotice n;
    AIRLOCK_RETURN_IF_ERROR(ReadString(e, "name", path + ".name", true, &n.name));
    AIRLOCK_RETURN_IF_ERROR(ReadUint(e, "size", path + ".size", &n.size));
    AIRLOCK_RETURN_IF_ERROR(ReadString(e, "reason", path + ".reason", false, &n.reason));
    out->push_back(std::move(n));
  }
  return OkStatus();
}

}  // namespace

Json ToJson(const RunResult& r) {
  Json files = Json::array();
  for (const OutputFile& f : r.files) {
    const bool text = IsPlainText(f.content);
    files.push_back({
        {"name", SanitizeUtf8(f.name)},
        {"size", f.size},
        {"encoding", text ? "text" : "base64"},
        {"content", text ? f.content : Base64Encode(f.content)},
        {"truncated", f.truncated},
        {"mime_type", f.mime_type.empty() ? GuessMimeType(f.name) : f.mime_type},
    });
  }
  Json out{
      {"status", RunStatusName(r.status)},
      {"message", SanitizeUtf8(r.message)},
      {"error_code", r.error_code},
      {"language", SanitizeUtf8(r.language)},
      {"isolation", r.isolation},
      {"exit_code", r.exit_code},
      {"signal", r.signal == 0 ? Json(nullptr) : Json(r.signal)},
      {"stdout", SanitizeUtf8(r.stdout_text)},
      {"stdout_truncated", r.stdout_truncated},
      {"stderr", SanitizeUtf8(r.stderr_text)},
      {"stderr_truncated", r.stderr_truncated},
      {"compile_output", SanitizeUtf8(r.compile_output)},
      {"compile_output_truncated", r.compile_output_truncated},
      {"wall_ms", r.wall_ms},
      {"cpu_ms", r.cpu_ms},
      {"compile_ms", r.compile_ms},
      {"peak_memory_bytes", r.peak_memory_bytes},
      {"files", std::move(files)},
      {"files_truncated", r.files_truncated},
      {"files_skipped", NoticesToJson(r.files_skipped)},
      {"files_left", NoticesToJson(r.files_left)},
      {"notes", SanitizeAll(r.notes)},
  };
  if (!r.runner_host.empty()) out["runner_host"] = r.runner_host;
  return out;
}

StatusOr<RunResult> RunResultFromJson(const Json& j) {
  AIRLOCK_RETURN_IF_ERROR(RequireObject(j, "result"));
  RunResult r;
  std::string status;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "status", "status", true, &status));
  std::optional<RunStatus> s = RunStatusFromName(status);
  if (!s) return InvalidArgument("status \"" + status + "\" is not a known run status");
  r.status = *s;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "message", "message", false, &r.message));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "error_code", "error_code", false, &r.error_code));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "language", "language", false, &r.language));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "isolation", "isolation", false, &r.isolation));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "runner_host", "runner_host", false, &r.runner_host));
  AIRLOCK_RETURN_IF_ERROR(ReadInt(j, "exit_code", "exit_code", &r.exit_code));
  AIRLOCK_RETURN_IF_ERROR(ReadInt(j, "signal", "signal", &r.signal));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "stdout", "stdout", false, &r.stdout_text));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "stdout_truncated", "stdout_truncated", &r.stdout_truncated));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "stderr", "stderr", false, &r.stderr_text));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "stderr_truncated", "stderr_truncated", &r.stderr_truncated));
  AIRLOCK_RETURN_IF_ERROR(
      ReadString(j, "compile_output", "compile_output", false, &r.compile_output));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "compile_output_truncated", "compile_output_truncated",
                                   &r.compile_output_truncated));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "wall_ms", "wall_ms", &r.wall_ms));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "cpu_ms", "cpu_ms", &r.cpu_ms));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "compile_ms", "compile_ms", &r.compile_ms));
  AIRLOCK_RETURN_IF_ERROR(
      ReadUint(j, "peak_memory_bytes", "peak_memory_bytes", &r.peak_memory_bytes));

  auto files = j.find("files");
  if (files != j.end() && !files->is_null()) {
    if (!files->is_array()) return InvalidArgument("files must be an array");
    for (size_t i = 0; i < files->size(); ++i) {
      const std::string path = "files[" + std::to_string(i) + "]";
      const Json& e = (*files)[i];
      AIRLOCK_RETURN_IF_ERROR(RequireObject(e, path));
      OutputFile f;
      AIRLOCK_RETURN_IF_ERROR(ReadString(e, "name", path + ".name", true, &f.name));
      AIRLOCK_RETURN_IF_ERROR(ReadContent(e, path, &f.content));
      f.size = f.content.size();
      AIRLOCK_RETURN_IF_ERROR(ReadUint(e, "size", path + ".size", &f.size));
      AIRLOCK_RETURN_IF_ERROR(ReadBool(e, "truncated", path + ".truncated", &f.truncated));
      AIRLOCK_RETURN_IF_ERROR(ReadString(e, "mime_type", path + ".mime_type", false, &f.mime_type));
      r.files.push_back(std::move(f));
    }
  }
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "files_truncated", "files_truncated", &r.files_truncated));
  AIRLOCK_RETURN_IF_ERROR(ReadNotices(j, "files_skipped", &r.files_skipped));
  AIRLOCK_RETURN_IF_ERROR(ReadNotices(j, "files_left", &r.files_left));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(j, "notes", "notes", &r.notes));
  return r;
}

Json ToJson(const RunRequest& r) {
  Json files = Json::array();
  for (const InputFile& f : r.files) {
    const bool text = IsPlainText(f.content);
    files.push_back({
        {"name", SanitizeUtf8(f.name)},
        {"content", text ? f.content : Base64Encode(f.content)},
        {"encoding", text ? "text" : "base64"},
    });
  }
  Json j{
      {"language", SanitizeUtf8(r.language)},
      {"args", SanitizeAll(r.args)},
      {"files", std::move(files)},
      {"output_files", SanitizeAll(r.output_globs)},
      {"timeout_ms", r.timeout_ms},
      {"memory_mb", r.memory_mb},
      {"isolation", r.isolation},
      {"code_mode", r.code_mode},
      {"max_output_bytes", r.max_output_bytes},
      {"truncate_output", r.truncate_output},
  };
  if (!r.session_id.empty()) j["session_id"] = r.session_id;
  if (!r.packages.empty()) j["packages"] = SanitizeAll(r.packages);
  // Code and stdin keep their exact bytes: text when they can be, else base64.
  const bool code_text = IsValidUtf8(r.code);
  j["code"] = code_text ? r.code : Base64Encode(r.code);
  if (!code_text) j["code_encoding"] = "base64";
  const bool stdin_text = IsValidUtf8(r.stdin_data);
  j["stdin"] = stdin_text ? r.stdin_data : Base64Encode(r.stdin_data);
  if (!stdin_text) j["stdin_encoding"] = "base64";
  return j;
}

namespace {

// Reads a string field that may be accompanied by "<key>_encoding".
Status ReadEncodedString(const Json& j, const char* key, bool required, std::string* out) {
  std::string value, encoding = "text";
  const std::string enc_key = std::string(key) + "_encoding";
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, key, key, required, &value));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, enc_key.c_str(), enc_key, false, &encoding));
  if (encoding == "text") {
    *out = std::move(value);
  } else if (encoding == "base64") {
    if (!Base64Decode(value, out)) return InvalidArgument(std::string(key) + " is not valid base64");
  } else {
    return InvalidArgument(enc_key + " must be \"text\" or \"base64\"");
  }
  return OkStatus();
}

}  // namespace

StatusOr<RunRequest> RunRequestFromJson(const Json& j) {
  AIRLOCK_RETURN_IF_ERROR(RequireObject(j, "request"));
  RunRequest r;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "language", "language", true, &r.language));
  AIRLOCK_RETURN_IF_ERROR(ReadEncodedString(j, "code", true, &r.code));
  AIRLOCK_RETURN_IF_ERROR(ReadEncodedString(j, "stdin", false, &r.stdin_data));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(j, "args", "args", &r.args));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(j, "output_files", "output_files", &r.output_globs));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "timeout_ms", "timeout_ms", &r.timeout_ms));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "memory_mb", "memory_mb", &r.memory_mb));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "isolation", "isolation", false, &r.isolation));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "code_mode", "code_mode", &r.code_mode));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "max_output_bytes", "max_output_bytes", &r.max_output_bytes));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "truncate_output", "truncate_output", &r.truncate_output));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "session_id", "session_id", false, &r.session_id));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(j, "packages", "packages", &r.packages));
  auto files = j.find("files");
  if (files != j.end() && !files->is_null()) {
    if (!files->is_array()) return InvalidArgument("files must be an array");
    for (size_t i = 0; i < files->size(); ++i) {
      const std::string path = "files[" + std::to_string(i) + "]";
      const Json& e = (*files)[i];
      AIRLOCK_RETURN_IF_ERROR(RequireObject(e, path));
      InputFile f;
      AIRLOCK_RETURN_IF_ERROR(ReadString(e, "name", path + ".name", true, &f.name));
      AIRLOCK_RETURN_IF_ERROR(ReadContent(e, path, &f.content));
      r.files.push_back(std::move(f));
    }
  }
  return r;
}

uint64_t LanguageInfo::DefaultTimeoutMs(const std::string& tier) const {
  auto it = tier_defaults.find(tier);
  return it != tier_defaults.end() && it->second.timeout_ms ? it->second.timeout_ms : default_timeout_ms;
}

uint64_t LanguageInfo::DefaultMemoryMb(const std::string& tier) const {
  auto it = tier_defaults.find(tier);
  return it != tier_defaults.end() && it->second.memory_mb ? it->second.memory_mb : default_memory_mb;
}

Json ToJson(const LanguageInfo& l) {
  Json tiers = Json::object();
  for (const auto& [tier, d] : l.tier_defaults) {
    tiers[tier] = {{"default_timeout_ms", d.timeout_ms}, {"default_memory_mb", d.memory_mb}};
  }
  return Json{
      {"name", l.name},
      {"display_name", l.display_name},
      {"version", SanitizeUtf8(l.version)},
      {"compiled", l.compiled},
      {"tiers", l.tiers},
      {"default_timeout_ms", l.default_timeout_ms},
      {"default_memory_mb", l.default_memory_mb},
      {"notes", SanitizeUtf8(l.notes)},
      {"sessions", l.sessions},
      {"session_tiers", l.session_tiers},
      {"tier_defaults", std::move(tiers)},
  };
}

StatusOr<LanguageInfo> LanguageInfoFromJson(const Json& j) {
  AIRLOCK_RETURN_IF_ERROR(RequireObject(j, "language"));
  LanguageInfo l;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "name", "name", true, &l.name));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "display_name", "display_name", false, &l.display_name));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "version", "version", false, &l.version));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "compiled", "compiled", &l.compiled));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(j, "tiers", "tiers", &l.tiers));
  AIRLOCK_RETURN_IF_ERROR(
      ReadUint(j, "default_timeout_ms", "default_timeout_ms", &l.default_timeout_ms));
  AIRLOCK_RETURN_IF_ERROR(
      ReadUint(j, "default_memory_mb", "default_memory_mb", &l.default_memory_mb));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "notes", "notes", false, &l.notes));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "sessions", "sessions", &l.sessions));
  if (j.contains("session_tiers")) {
    AIRLOCK_RETURN_IF_ERROR(ReadStringList(j, "session_tiers", "session_tiers", &l.session_tiers));
  } else if (l.sessions) {
    l.session_tiers = {"native"};  // a runner from before WASM-tier sessions
  }
  if (auto it = j.find("tier_defaults"); it != j.end()) {
    if (!it->is_object()) return InvalidArgument("tier_defaults: expected object");
    for (const auto& [tier, d] : it->items()) {
      AIRLOCK_RETURN_IF_ERROR(RequireObject(d, "tier_defaults." + tier));
      LanguageInfo::TierDefaults td;
      AIRLOCK_RETURN_IF_ERROR(ReadUint(d, "default_timeout_ms", "tier_defaults." + tier + ".default_timeout_ms",
                                       &td.timeout_ms));
      AIRLOCK_RETURN_IF_ERROR(ReadUint(d, "default_memory_mb", "tier_defaults." + tier + ".default_memory_mb",
                                       &td.memory_mb));
      l.tier_defaults[tier] = td;
    }
  }
  return l;
}

Json ToJson(const SessionSpec& s) {
  Json j{{"id", s.id},
         {"language", s.language},
         {"isolation", s.isolation},
         {"memory_mb", s.memory_mb},
         {"cpu_budget_ms", s.cpu_budget_ms},
         {"shared", s.shared},
         {"max_lifetime_s", s.max_lifetime_s}};
  if (!s.packages.empty()) j["packages"] = s.packages;
  if (s.code_mode) j["code_mode"] = true;
  return j;
}

StatusOr<SessionSpec> SessionSpecFromJson(const Json& j) {
  AIRLOCK_RETURN_IF_ERROR(RequireObject(j, "session"));
  SessionSpec s;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "id", "id", true, &s.id));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "language", "language", true, &s.language));
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, "isolation", "isolation", false, &s.isolation));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "memory_mb", "memory_mb", &s.memory_mb));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "cpu_budget_ms", "cpu_budget_ms", &s.cpu_budget_ms));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "shared", "shared", &s.shared));
  AIRLOCK_RETURN_IF_ERROR(ReadUint(j, "max_lifetime_s", "max_lifetime_s", &s.max_lifetime_s));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(j, "packages", "packages", &s.packages));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, "code_mode", "code_mode", &s.code_mode));
  if (s.shared && s.max_lifetime_s == 0) return InvalidArgument("a shared session needs max_lifetime_s");
  if (s.id.empty()) return InvalidArgument("id must not be empty");
  return s;
}

}  // namespace airlock::runtimes
