// The WASM tier's languages (isolation "wasm"): programs that run inside the
// embedded engine (airlock-js, SpiderMonkey), itself inside the jail, with no
// host system interface of their own.
#include "runtimes/language.h"

namespace airlock::runtimes {

std::vector<LanguageSpec> WasmTierLanguages(const std::string& airlock_js_path) {
  std::vector<LanguageSpec> all;
  if (airlock_js_path.empty()) return all;

  LanguageSpec js;
  js.name = "javascript";
  js.display_name = "JavaScript";
  js.source_file = "main.js";
  js.version_argv = {airlock_js_path, "--version"};
  js.run_argv = {kJailAirlockJsPath, "--bridge-fd", "none", "--heap-mb", "{heap_mb}", "--deadline-ms",
                 "{timeout_ms}", "main.js"};
  js.binds = {{airlock_js_path, false, kJailAirlockJsPath}};
  js.max_pids = 16;  // the engine's helper threads
  js.isolation = "wasm";
  js.notes = "SpiderMonkey with only the ECMAScript built-ins, console and scriptArgs: no modules, files, network, "
             "process or stdin; top-level await and return work";
  all.push_back(js);
  return all;
}

}  // namespace airlock::runtimes
