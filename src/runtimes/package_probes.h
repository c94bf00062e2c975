// What a language's interpreter can import, asked of the interpreter itself
// inside the jail: a tiny program per language that prints the packages it
// finds as JSON, and the parser of that output. The MCP layer runs the
// probes (mcp/tools/package_catalog.h); nothing here runs code.
//
//   python      importlib.metadata distributions        kind "package"
//   javascript  node's built-in modules                 kind "builtin"
//               and NODE_PATH's packages (package_dirs.h) kind "package"
//   typescript  the same (esbuild, then node)
//   ruby        Gem::Specification (default gems too)    kind "gem"
//   php         get_loaded_extensions()                  kind "extension"
//
// Languages without a probe (bash, C, C++, JavaScript in the WASM engine)
// have no package list: their notes say what they offer.
#ifndef AIRLOCK_RUNTIMES_PACKAGE_PROBES_H_
#define AIRLOCK_RUNTIMES_PACKAGE_PROBES_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::runtimes {

struct PackageEntry {
  std::string name;
  std::string version;
  std::string kind;  // "package", "builtin", "gem", "extension"
};

// The most entries one probe may report (the rest are dropped).
inline constexpr size_t kMaxPackageEntries = 4000;

// The probe program for `language` in `tier` ("native" or "wasm"), or
// nullopt when the language has none there.
std::optional<std::string> PackageProbeProgram(const std::string& language, const std::string& tier);

// Parses a probe's stdout: a JSON array of [name, version, kind] triples.
// Entries that are not well-formed are skipped; the result is sorted by name
// (case-insensitive) without duplicates and capped at kMaxPackageEntries.
StatusOr<std::vector<PackageEntry>> ParsePackageProbeOutput(const std::string& stdout_text);

nlohmann::json ToJson(const PackageEntry& p);

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_PACKAGE_PROBES_H_
