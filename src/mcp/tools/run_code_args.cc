#include "mcp/tools/run_code_args.h"

#include <algorithm>

#include <set>

#include "base/encoding.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

const char* TypeName(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

Status Expected(const std::string& path, const char* what, const json& got) {
  return InvalidArgument(path + ": expected " + what + ", got " + TypeName(got));
}

Status ReadString(const json& obj, const std::string& key, const std::string& path, bool required,
                  std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    return required ? InvalidArgument(path + ": required") : OkStatus();
  }
  if (!it->is_string()) return Expected(path, "string", *it);
  *out = it->get<std::string>();
  return OkStatus();
}

Status ReadStringList(const json& obj, const std::string& key, const std::string& path,
                      std::vector<std::string>* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return OkStatus();
  if (!it->is_array()) return Expected(path, "array of strings", *it);
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_string()) return Expected(path + "[" + std::to_string(i) + "]", "string", v);
    out->push_back(v.get<std::string>());
  }
  return OkStatus();
}

// A limit: absent → default, present → integer in [1, max].
Status ReadLimit(const json& obj, const std::string& key, uint64_t def, uint64_t max,
                 const char* unit, uint64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    *out = def;
    return OkStatus();
  }
  const std::string path = "arguments." + key;
  if (!it->is_number_integer() && !it->is_number_unsigned()) {
    // 5000.0 is an integer in JSON Schema terms.
    if (it->is_number_float() && it->get<double>() == static_cast<double>(static_cast<int64_t>(it->get<double>()))) {
      json as_int = static_cast<int64_t>(it->get<double>());
      json copy = {{key, as_int}};
      return ReadLimit(copy, key, def, max, unit, out);
    }
    return Expected(path, "integer", *it);
  }
  if (it->is_number_integer() && it->get<int64_t>() < 1) {
    return FailedPrecondition(key + " must be at least 1");
  }
  uint64_t v = it->get<uint64_t>();
  if (v > max) {
    return FailedPrecondition(key + " " + std::to_string(v) + " exceeds the server maximum of " +
                              std::to_string(max) + " " + unit);
  }
  *out = v;
  return OkStatus();
}

Status ReadFiles(const json& args, const config::LimitsConfig& limits,
                 std::vector<runtimes::InputFile>* out) {
  auto it = args.find("files");
  if (it == args.end() || it->is_null()) return OkStatus();
  if (!it->is_array()) return Expected("arguments.files", "array", *it);
  if (it->size() > limits.max_files) {
    return FailedPrecondition("too many files: " + std::to_string(it->size()) + " (maximum " +
                              std::to_string(limits.max_files) + ")");
  }
  uint64_t total = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& f = (*it)[i];
    const std::string path = "arguments.files[" + std::to_string(i) + "]";
    if (!f.is_object()) return Expected(path, "object", f);
    for (const auto& [key, value] : f.items()) {
      if (key != "name" && key != "content" && key != "encoding") {
        return InvalidArgument(path + "." + key + ": unknown property");
      }
    }
    runtimes::InputFile file;
    std::string content, encoding = "text";
    AIRLOCK_RETURN_IF_ERROR(ReadString(f, "name", path + ".name", true, &file.name));
    AIRLOCK_RETURN_IF_ERROR(ReadString(f, "content", path + ".content", true, &content));
    AIRLOCK_RETURN_IF_ERROR(ReadString(f, "encoding", path + ".encoding", false, &encoding));
    if (encoding != "text" && encoding != "base64") {
      return InvalidArgument(path + ".encoding: expected \"text\" or \"base64\"");
    }
    std::string why = CheckRelativePath(file.name);
    if (!why.empty()) return FailedPrecondition("file name \"" + SanitizeUtf8(file.name) + "\": " + why);
    if (!seen.insert(file.name).second) {
      return FailedPrecondition("file name \"" + file.name + "\" given twice");
    }
    if (encoding == "base64") {
      if (!Base64Decode(content, &file.content)) {
        return InvalidArgument(path + ".content: invalid base64");
      }
    } else {
      file.content = std::move(content);
    }
    if (file.content.size() > limits.max_file_bytes) {
      return FailedPrecondition("file \"" + file.name + "\" is " + std::to_string(file.content.size()) +
                                " bytes; the maximum is " + std::to_string(limits.max_file_bytes));
    }
    total += file.content.size();
    if (total > limits.max_total_file_bytes) {
      return FailedPrecondition("input files total more than the maximum of " +
                                std::to_string(limits.max_total_file_bytes) + " bytes");
    }
    out->push_back(std::move(file));
  }
  return OkStatus();
}

const std::set<std::string>& KnownKeys() {
  static const std::set<std::string> kKeys = {"language", "code",   "stdin",      "args",
                                              "files",    "output_files", "timeout_ms", "memory_mb",
                                              "isolation"};
  return kKeys;
}

}  // namespace

std::string CheckRelativePath(const std::string& name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > 4096) return "longer than 4096 bytes";
  if (name.find('\0') != std::string::npos) return "contains a NUL byte";
  if (name.front() == '/') return "must be relative to /work (no leading '/')";
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string_view part(name.data() + start, end - start);
    if (part.empty()) return "has an empty path component";
    if (part == "..") return "must not contain \"..\"";
    if (part == ".") return "must not contain \".\" components";
    if (part.size() > 255) return "has a component longer than 255 bytes";
    start = end + 1;
  }
  return "";
}

StatusOr<runtimes::RunRequest> ParseRunCodeArguments(const json& args,
                                                     const std::vector<runtimes::LanguageInfo>& languages,
                                                     const config::LimitsConfig& limits, const TierRule& rule) {
  if (args.is_null()) return InvalidArgument("arguments: required (language, code)");
  if (!args.is_object()) return Expected("arguments", "object", args);
  for (const auto& [key, value] : args.items()) {
    if (!KnownKeys().count(key)) return InvalidArgument("arguments." + key + ": unknown property");
  }
  runtimes::RunRequest req;
  if (!args.contains("language")) {
    return InvalidArgument("arguments.language: required unless session_id is given (the language to run; see "
                           "list_languages)");
  }
  AIRLOCK_RETURN_IF_ERROR(ReadString(args, "language", "arguments.language", true, &req.language));
  AIRLOCK_RETURN_IF_ERROR(ReadString(args, "code", "arguments.code", true, &req.code));
  AIRLOCK_RETURN_IF_ERROR(ReadString(args, "stdin", "arguments.stdin", false, &req.stdin_data));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(args, "args", "arguments.args", &req.args));
  for (size_t i = 0; i < req.args.size(); ++i) {
    if (req.args[i].find('\0') != std::string::npos) {
      return FailedPrecondition("args[" + std::to_string(i) + "] contains a NUL byte");
    }
  }
  AIRLOCK_RETURN_IF_ERROR(ReadFiles(args, limits, &req.files));
  AIRLOCK_RETURN_IF_ERROR(ReadStringList(args, "output_files", "arguments.output_files", &req.output_globs));
  if (req.output_globs.size() > limits.max_files) {
    return FailedPrecondition("too many output_files patterns (maximum " + std::to_string(limits.max_files) + ")");
  }
  for (const std::string& glob : req.output_globs) {
    std::string why = CheckRelativePath(glob);
    if (!why.empty()) return FailedPrecondition("output_files \"" + SanitizeUtf8(glob) + "\": " + why);
  }

  const runtimes::LanguageInfo* lang = nullptr;
  for (const runtimes::LanguageInfo& l : languages) {
    if (l.name == req.language) lang = &l;
  }
  if (lang == nullptr) {
    std::string known;
    for (const runtimes::LanguageInfo& l : languages) known += (known.empty() ? "" : ", ") + l.name;
    if (known.empty()) known = "(none available right now)";
    return FailedPrecondition("unknown language \"" + SanitizeUtf8(req.language) + "\"; available: " + known);
  }
  req.isolation.clear();  // RunRequest defaults to "native"; absent means the rule's choice
  AIRLOCK_RETURN_IF_ERROR(ReadString(args, "isolation", "arguments.isolation", false, &req.isolation));
  const std::vector<std::string> tiers_of =
      lang->tiers.empty() ? std::vector<std::string>{"native"} : lang->tiers;  // no tiers listed: native only
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  if (req.isolation.empty()) req.isolation = has(tiers_of, rule.preferred) ? rule.preferred : tiers_of.front();
  if (!has(rule.allowed, req.isolation)) {
    std::string allowed;
    for (const std::string& t : rule.allowed) allowed += (allowed.empty() ? "" : ", ") + t;
    return FailedPrecondition("isolation \"" + SanitizeUtf8(req.isolation.substr(0, 32)) +
                              "\" is not allowed on this endpoint; allowed: " + allowed);
  }
  if (!has(tiers_of, req.isolation)) {
    std::string tiers;
    for (const std::string& t : tiers_of) tiers += (tiers.empty() ? "" : ", ") + t;
    return FailedPrecondition("isolation \"" + SanitizeUtf8(req.isolation.substr(0, 32)) + "\" is not available for " +
                              req.language + "; available: " + tiers);
  }
  // The tier's own defaults (WASM Ruby's memory is twice native Ruby's).
  const uint64_t tier_timeout = lang->DefaultTimeoutMs(req.isolation);
  const uint64_t tier_memory = lang->DefaultMemoryMb(req.isolation);
  const uint64_t def_timeout = tier_timeout ? std::min(tier_timeout, limits.max_timeout_ms) : limits.default_timeout_ms;
  const uint64_t def_memory = tier_memory ? std::min(tier_memory, limits.max_memory_mb) : limits.default_memory_mb;
  AIRLOCK_RETURN_IF_ERROR(ReadLimit(args, "timeout_ms", def_timeout, limits.max_timeout_ms, "ms", &req.timeout_ms));
  AIRLOCK_RETURN_IF_ERROR(ReadLimit(args, "memory_mb", def_memory, limits.max_memory_mb, "MiB", &req.memory_mb));
  return req;
}

}  // namespace airlock::mcp
