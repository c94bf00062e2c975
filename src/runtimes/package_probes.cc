#include "runtimes/package_probes.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace airlock::runtimes {
namespace {

using nlohmann::json;

constexpr const char* kPythonProbe =
    "import json\n"
    "try:\n"
    "    import importlib.metadata as md\n"
    "    found = {(d.metadata['Name'], d.version) for d in md.distributions() if d.metadata['Name']}\n"
    "except Exception:\n"
    "    found = set()\n"
    "print(json.dumps(sorted([n, v, 'package'] for n, v in found)))\n";

// Node's built-in modules, then the packages of NODE_PATH's directories
// (operator package directories, package_dirs.h). Plain JavaScript is also
// valid TypeScript: the TypeScript probe is the same program.
constexpr const char* kNodeProbe =
    "const fs = require('fs');\n"
    "const v = process.versions.node;\n"
    "const out = require('module').builtinModules\n"
    "    .filter((m) => !m.startsWith('_')).map((m) => [m, v, 'builtin']);\n"
    "const list = (d) => { try { return fs.readdirSync(d); } catch (e) { return []; } };\n"
    "for (const dir of (process.env.NODE_PATH || '').split(':').filter(Boolean)) {\n"
    "  for (const n of list(dir).flatMap((n) => n.startsWith('@') ? list(dir + '/' + n).map((m) => n + '/' + m) : [n])) {\n"
    "    try {\n"
    "      const p = JSON.parse(fs.readFileSync(dir + '/' + n + '/package.json', 'utf8'));\n"
    "      out.push([String(p.name || n), String(p.version || ''), 'package']);\n"
    "    } catch (e) {}\n"
    "  }\n"
    "}\n"
    "console.log(JSON.stringify(out));\n";

// No json library needed (the WASM build may lack the extension): String#dump
// quotes ASCII names and versions as JSON does.
// Ruby runs with gems disabled (start-up time): rubygems is loaded here.
constexpr const char* kRubyProbe =
    "require 'rubygems'\n"
    "specs = Gem::Specification.map { |s| [s.name.to_s, s.version.to_s] }.uniq.sort\n"
    "puts '[' + specs.map { |n, v| \"[#{n.dump},#{v.dump},\\\"gem\\\"]\" }.join(',') + ']'\n";

constexpr const char* kPhpProbe =
    "<?php\n"
    "$out = [];\n"
    "foreach (get_loaded_extensions() as $e) { $out[] = [$e, phpversion($e) ?: PHP_VERSION, 'extension']; }\n"
    "echo json_encode($out), \"\\n\";\n";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<std::string> PackageProbeProgram(const std::string& language, const std::string& tier) {
  if (language == "python") return kPythonProbe;
  if (language == "ruby") return kRubyProbe;
  if (tier != "native") return std::nullopt;
  if (language == "javascript") return kNodeProbe;
  if (language == "typescript") return kNodeProbe;
  if (language == "php") return kPhpProbe;
  return std::nullopt;
}

StatusOr<std::vector<PackageEntry>> ParsePackageProbeOutput(const std::string& stdout_text) {
  // The JSON is the last non-empty line (an interpreter may warn first).
  std::string line;
  size_t end = stdout_text.find_last_not_of(" \r\n\t");
  if (end == std::string::npos) return InvalidArgument("the package probe printed nothing");
  const size_t start = stdout_text.rfind('\n', end);
  line = stdout_text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
  const json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return InvalidArgument("the package probe's output is not a JSON array");
  std::vector<PackageEntry> out;
  std::set<std::string> seen;
  for (const json& e : parsed) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_string() || !e[1].is_string() || !e[2].is_string()) continue;
    PackageEntry p{e[0].get<std::string>(), e[1].get<std::string>(), e[2].get<std::string>()};
    if (p.name.empty() || p.name.size() > 200 || p.version.size() > 100 || p.kind.size() > 20) continue;
    if (!seen.insert(Lower(p.name)).second) continue;
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(),
            [](const PackageEntry& a, const PackageEntry& b) { return Lower(a.name) < Lower(b.name); });
  if (out.size() > kMaxPackageEntries) out.resize(kMaxPackageEntries);
  return out;
}

json ToJson(const PackageEntry& p) { return {{"name", p.name}, {"version", p.version}, {"kind", p.kind}}; }

}  // namespace airlock::runtimes
