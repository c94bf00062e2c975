// The code-mode runtimes: programs that get `tools` (bridge.h) on fd 3.
#include <string>
#include <vector>

#include "runtimes/codemode/python_harness.h"
#include "runtimes/language.h"
#include "runtimes/session_harness.h"

namespace airlock::runtimes {

std::vector<LanguageSpec> CodeModeLanguages(const std::string& airlock_js_path) {
  std::vector<LanguageSpec> all;

  if (!airlock_js_path.empty()) {
    // SpiderMonkey with zero ambient authority: only the ECMAScript
    // built-ins, console and tools. Its own deadline (interrupt callback) and
    // heap limit fire before the jail's, so the program gets a clean error.
    LanguageSpec js;
    js.name = "javascript";
    js.display_name = "JavaScript (embedded SpiderMonkey, code mode)";
    js.source_file = "main.js";
    js.version_argv = {airlock_js_path, "--version"};
    js.run_argv = {kJailAirlockJsPath, "--bridge-fd", "3", "--heap-mb", "{heap_mb}", "--deadline-ms", "{timeout_ms}",
                   "main.js"};
    // Pre-started: the engine and its globals are up, the bridge is fd 3,
    // and the hand-over on fd 4 brings the deadline; then main.js is read.
    js.prestart_argv = {kJailAirlockJsPath, "--bridge-fd", "3", "--resume-fd", "4", "--heap-mb", "{heap_mb}",
                        "main.js"};
    js.prestart_takes_timeout = true;
    // Sessions (open_session mode "codemode"): the engine's session loop
    // with `tools`; each cell's bridge comes with its turn.
    js.session_argv = {kJailAirlockJsPath, "--session", "--control-fd", "3", "--heap-mb", "{heap_mb}",
                       "--code-mode", "1"};
    js.session_stdin = false;
    js.binds = {{airlock_js_path, false, kJailAirlockJsPath}};
    js.max_pids = 16;
    js.code_mode = true;
    js.notes = "ECMAScript built-ins, console and tools only: no modules, no fs, no network, no process";
    all.push_back(js);
  }

  LanguageSpec python;
  python.name = "python";
  python.display_name = "Python (code mode)";
  python.source_file = "main.py";
  python.version_argv = {"/usr/bin/python3", "--version"};
  python.run_argv = {"/usr/bin/python3", "-I", "-c", std::string(PythonHarnessSource()), "main.py"};
  // Pre-started: the harness has imported what it needs and waits for the
  // hand-over (the program's arguments, then EOF) on fd 4.
  python.prestart_argv = {"/usr/bin/python3", "-I", "-c", std::string(PythonHarnessSource()), "--resume-fd", "4",
                          "main.py"};
  // Sessions (open_session mode "codemode"): the session harness with the
  // code-mode harness's hooks; each cell's bridge comes with its turn.
  python.session_argv = {"/usr/bin/python3", "-I", "-c",
                         std::string(PythonHarnessSource()) + PythonSessionHarnessWithHooks("_SessionHooks()"),
                         "--session"};
  python.binds = {{"/etc/python3.11"}, {"/etc/python3"}};
  python.max_pids = 32;  // the harness's reader thread, asyncio's default executor
  python.code_mode = true;
  python.notes = "CPython with a `tools` global (sync and asyncio); standard library only";
  all.push_back(python);

  return all;
}

}  // namespace airlock::runtimes
