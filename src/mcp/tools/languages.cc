#include "mcp/tools/languages.h"

#include <algorithm>
#include <map>

#include "mcp/tools/session_tools.h"

namespace airlock::mcp {

using nlohmann::json;

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The endpoint's package directories: name -> language.
std::map<std::string, std::string> PackageDirsOf(const config::Config& config, const std::vector<std::string>& names) {
  std::map<std::string, std::string> out;
  for (const auto& [name, dir] : config.languages.packages) {
    if (Contains(names, "*") || Contains(names, name)) out[name] = dir.language;
  }
  return out;
}

}  // namespace

LanguageCatalog::LanguageCatalog(runtimes::CodeExecutor& executor, const config::Config& config,
                                 std::vector<std::string> allowed_tiers,
                                 const std::vector<std::string>& endpoint_packages)
    : executor_(executor),
      limits_(config.limits),
      enabled_(config.languages.enabled),
      sessions_(config.sessions.enabled),
      allowed_tiers_(std::move(allowed_tiers)),
      default_tier_(Contains(allowed_tiers_, config.languages.default_isolation) || allowed_tiers_.empty()
                        ? config.languages.default_isolation
                        : allowed_tiers_.front()),
      packages_(executor, PackageDirsOf(config, endpoint_packages)) {}

std::vector<runtimes::LanguageInfo> LanguageCatalog::Languages() {
  std::vector<runtimes::LanguageInfo> all = executor_.Languages();
  std::vector<runtimes::LanguageInfo> out;
  for (runtimes::LanguageInfo& l : all) {
    if (!enabled_.empty() && !Contains(enabled_, l.name)) continue;
    if (l.tiers.empty()) l.tiers = {"native"};
    // Sessions in the tiers that have them and this endpoint allows.
    std::erase_if(l.session_tiers, [this](const std::string& t) { return !sessions_ || !Contains(allowed_tiers_, t); });
    l.sessions = !l.session_tiers.empty();
    std::erase_if(l.tiers, [this](const std::string& t) { return !Contains(allowed_tiers_, t); });
    std::erase_if(l.tier_defaults, [this](const auto& d) { return !Contains(allowed_tiers_, d.first); });
    // What "no pip" leaves out: the operator's own packages, where they are.
    if (Contains(l.tiers, "native") && !packages_.DirsFor(l.name, "native").empty()) {
      l.notes += std::string(l.notes.empty() ? "" : "; ") +
                 "plus packages the operator installed for this endpoint (native tier; list_languages "
                 "{\"packages\": true} lists them)";
    }
    if (!l.tiers.empty()) out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(),
            [](const runtimes::LanguageInfo& a, const runtimes::LanguageInfo& b) { return a.name < b.name; });
  return out;
}

json LanguageCatalog::Describe() {
  json langs = json::array();
  for (const runtimes::LanguageInfo& l : Languages()) langs.push_back(runtimes::ToJson(l));
  return {{"languages", std::move(langs)},
          {"limits",
           {{"default_timeout_ms", limits_.default_timeout_ms},
            {"max_timeout_ms", limits_.max_timeout_ms},
            {"default_memory_mb", limits_.default_memory_mb},
            {"max_memory_mb", limits_.max_memory_mb},
            {"max_output_bytes", limits_.max_output_bytes},
            {"max_files", limits_.max_files},
            {"max_file_bytes", limits_.max_file_bytes},
            {"max_total_file_bytes", limits_.max_total_file_bytes}}},
          {"sandbox",
           {{"network", false},
            {"workdir", "/work"},
            {"persistent", false},
            {"isolation", allowed_tiers_},
            {"default_isolation", default_tier_}}}};
}

json ListLanguagesTool::Definition() {
  return {{"name", name()},
          {"title", "List languages"},
          {"description",
           "List the languages run_code accepts (with versions, preinstalled libraries and "
           "default limits) and the server's maximum limits."},
          {"inputSchema",
           {{"type", "object"},
            {"properties",
             {{"language",
               {{"type", "string"}, {"description", "List this language only (e.g. \"python\")."}}},
              {"packages",
               {{"type", "boolean"},
                {"description",
                 "Also list the packages each language can import, per isolation tier, with versions "
                 "(Python distributions, Node built-in modules, Ruby gems, PHP extensions). The first "
                 "request probes the interpreters in the sandbox and takes a few seconds; later ones are "
                 "cached."}}}}},
            {"additionalProperties", false}}},
          {"outputSchema",
           {{"type", "object"},
            {"properties",
             {{"languages", {{"type", "array"}, {"items", {{"type", "object"}}}}},
              {"limits", {{"type", "object"}}},
              {"sandbox", {{"type", "object"}}}}},
            {"required", {"languages", "limits"}}}},
          {"annotations",
           {{"title", "List languages"},
            {"readOnlyHint", true},
            {"destructiveHint", false},
            {"idempotentHint", true},
            {"openWorldHint", false}}}};
}

StatusOr<json> ListLanguagesTool::Call(const json& arguments, ToolCallContext& ctx) {
  if (!arguments.is_null() && !arguments.is_object()) {
    return InvalidArgument("arguments: expected object");
  }
  bool with_packages = false;
  std::string only;
  if (arguments.is_object()) {
    for (const auto& [key, value] : arguments.items()) {
      if (key == "packages") {
        if (!value.is_boolean()) return InvalidArgument("arguments.packages: expected true or false");
        with_packages = value.get<bool>();
      } else if (key == "language") {
        if (!value.is_string()) return InvalidArgument("arguments.language: expected a string");
        only = value.get<std::string>();
      } else {
        return InvalidArgument("arguments." + key + ": unknown property");
      }
    }
  }
  json doc = catalog_.Describe();
  if (!only.empty()) {
    json kept = json::array();
    for (json& l : doc["languages"]) {
      if (l.value("name", std::string()) == only) kept.push_back(std::move(l));
    }
    if (kept.empty()) return InvalidArgument("arguments.language: \"" + only.substr(0, 40) + "\" is not offered here");
    doc["languages"] = std::move(kept);
  }
  if (with_packages) {
    for (json& l : doc["languages"]) {
      json per_tier = json::object();
      for (const json& tier : l.value("tiers", json::array())) {
        if (!tier.is_string()) continue;
        if (ctx.cancel().cancelled()) return Cancelled("list_languages cancelled");
        per_tier[tier.get<std::string>()] = catalog_.packages().Get(l.value("name", std::string()), tier.get<std::string>(),
                                                                    SessionOwner(ctx.caller()), ctx.cancel());
      }
      l["packages"] = std::move(per_tier);
    }
  }
  std::string text;
  for (const json& l : doc["languages"]) {
    text += "- " + l.value("name", std::string()) + " " + l.value("version", std::string());
    std::string notes = l.value("notes", std::string());
    if (!notes.empty()) text += " (" + notes + ")";
    if (l.contains("packages")) {
      for (const auto& [tier, p] : l["packages"].items()) {
        if (p.contains("packages") && p["packages"].is_array()) {
          text += "; " + tier + ": " + std::to_string(p["packages"].size()) + " packages";
        }
      }
    }
    text += "\n";
  }
  if (text.empty()) text = "No languages are available right now.\n";
  return json{{"content", json::array({{{"type", "text"}, {"text", text + doc.dump()}}})},
              {"structuredContent", doc}};
}

json LanguagesResourceEntry() {
  return {{"uri", kLanguagesResourceUri},
          {"name", "languages"},
          {"title", "Languages and limits"},
          {"description", "Languages run_code accepts, their versions and libraries, and the limits."},
          {"mimeType", "application/json"}};
}

json ReadLanguagesResource(LanguageCatalog& catalog) {
  return {{"contents", json::array({{{"uri", kLanguagesResourceUri},
                                     {"mimeType", "application/json"},
                                     {"text", catalog.Describe().dump(2)}}})}};
}

}  // namespace airlock::mcp
