// The built-in languages of the native tier. One definition each.
#include <unistd.h>

#include "runtimes/language.h"
#include "runtimes/prestart_harness.h"
#include "runtimes/session_harness.h"

namespace airlock::runtimes {
namespace {

// gold links a hello world in a third of ld.bfd's time (the larger part of
// a C compile); binutils ships it on Debian 12.
void LinkWithGold(CompileStep& step) {
  if (access("/usr/bin/ld.gold", X_OK) == 0) step.argv.insert(step.argv.begin() + 1, "-fuse-ld=gold");
}

}  // namespace

std::vector<LanguageSpec> BuiltinLanguages() {
  std::vector<LanguageSpec> all;

  LanguageSpec python;
  python.name = "python";
  python.display_name = "Python";
  python.source_file = "main.py";
  python.version_argv = {"/usr/bin/python3", "--version"};
  // -I: isolated mode (no env vars, no user site, script dir not trusted).
  python.run_argv = {"/usr/bin/python3", "-I", "main.py"};
  python.prestart_argv = {"/usr/bin/python3", "-I", "-c", std::string(PythonPrestartHarness())};
  python.session_argv = {"/usr/bin/python3", "-I", "-c", std::string(PythonSessionHarness())};
  python.extra_env = {"MPLBACKEND=Agg", "MPLCONFIGDIR=/tmp/matplotlib"};
  python.binds = {{"/etc/python3.11"}, {"/etc/python3"}, {"/etc/matplotlibrc"}, {"/etc/fonts"}};
  python.notes = "CPython (Debian); numpy, pandas and matplotlib importable (read-only); no pip";
  all.push_back(python);

  LanguageSpec js;
  js.name = "javascript";
  js.display_name = "JavaScript (Node.js)";
  js.source_file = "main.js";
  js.version_argv = {"/usr/bin/node", "--version"};
  js.run_argv = {"/usr/bin/node", "-e", std::string(NodeRunHarness()), "/work/main.js"};
  js.prestart_argv = {"/usr/bin/node", "-e", std::string(NodePrestartHarness())};
  js.session_argv = {"/usr/bin/node", "-e", std::string(NodeSessionHarness())};
  js.max_pids = 64;
  js.notes = "Node.js with its built-in modules; no npm packages";
  all.push_back(js);

  LanguageSpec ts;
  ts.name = "typescript";
  ts.display_name = "TypeScript (esbuild + Node.js)";
  ts.source_file = "main.ts";
  ts.version_argv = {"/usr/bin/esbuild", "--version"};
  ts.compile = CompileStep{{"/usr/bin/esbuild", "main.ts", "--outfile=main.js", "--format=cjs",
                            "--platform=node", "--log-level=warning"},
                           20'000, "main.js"};
  ts.run_argv = js.run_argv;
  // Pre-started like JavaScript; the compile then runs in a jail of its own
  // (local_executor.cc) and main.js is handed to the waiting node.
  ts.prestart_argv = js.prestart_argv;
  ts.notes = "type annotations are stripped by esbuild (no type checking), then run on Node.js";
  all.push_back(ts);

  LanguageSpec c;
  c.name = "c";
  c.display_name = "C (gcc)";
  c.source_file = "main.c";
  c.version_argv = {"/usr/bin/gcc", "-dumpfullversion"};
  c.compile = CompileStep{
      {"/usr/bin/gcc", "-O2", "-std=gnu17", "-Wall", "-o", "main", "main.c", "-lm"}, 30'000, "main", true};
  LinkWithGold(*c.compile);
  c.run_argv = {"/work/main"};
  c.default_memory_mb = 512;
  c.notes = "gcc -O2 -std=gnu17 -lm";
  all.push_back(c);

  LanguageSpec cpp;
  cpp.name = "cpp";
  cpp.display_name = "C++ (g++)";
  cpp.source_file = "main.cpp";
  cpp.version_argv = {"/usr/bin/g++", "-dumpfullversion"};
  cpp.compile = CompileStep{
      {"/usr/bin/g++", "-O2", "-std=gnu++20", "-Wall", "-o", "main", "main.cpp"}, 45'000, "main", true};
  LinkWithGold(*cpp.compile);
  // The headers most programs start with; <bits/stdc++.h> is how
  // competitive-programming code starts (120 MB precompiled).
  cpp.pch = PchSpec{{"/usr/bin/g++", "-O2", "-std=gnu++20"}, {"iostream", "bits/stdc++.h", "vector", "string"}};
  cpp.run_argv = {"/work/main"};
  cpp.default_memory_mb = 512;
  cpp.notes = "g++ -O2 -std=gnu++20";
  all.push_back(cpp);

  LanguageSpec ruby;
  ruby.name = "ruby";
  ruby.display_name = "Ruby";
  ruby.source_file = "main.rb";
  ruby.version_argv = {"/usr/bin/ruby", "--version"};
  ruby.run_argv = {"/usr/bin/ruby", "--disable-gems", "main.rb"};
  ruby.prestart_argv = {"/usr/bin/ruby", "--disable-gems", "-e", std::string(RubyPrestartHarness())};
  ruby.session_argv = {"/usr/bin/ruby", "--disable-gems", "-e", std::string(RubySessionHarness())};
  ruby.notes = "Ruby standard library only";
  all.push_back(ruby);

  LanguageSpec php;
  php.name = "php";
  php.display_name = "PHP";
  php.source_file = "main.php";
  php.version_argv = {"/usr/bin/php", "--version"};
  php.run_argv = {"/usr/bin/php", "main.php"};
  php.prestart_argv = {"/usr/bin/php", "-r", std::string(PhpPrestartHarness())};
  php.session_argv = {"/usr/bin/php", "-r", std::string(PhpSessionHarness())};
  php.session_stdin = false;  // PHP cannot reopen fd 0
  php.binds = {{"/etc/php"}};
  php.notes = "php-cli with Debian's default extensions";
  all.push_back(php);

  LanguageSpec bash;
  bash.name = "bash";
  bash.display_name = "Bash";
  bash.source_file = "main.sh";
  bash.version_argv = {"/bin/bash", "--version"};
  bash.run_argv = {"/bin/bash", "main.sh"};
  bash.session_argv = {"/bin/bash", "--norc", "--noprofile", "-c", std::string(BashSessionHarness())};
  bash.notes = "bash with coreutils; no network tools work (no network)";
  all.push_back(bash);

  return all;
}

bool IsInstalled(const LanguageSpec& spec) {
  // Code-mode and WASM-tier runtimes may run a host binary mapped to another
  // path in the jail; their version command names the host binary.
  if (spec.code_mode || spec.isolation == "wasm") {
    // The host binaries it maps into the jail, and its compiler if any.
    for (const jail::BindMount& b : spec.binds) {
      if (!b.optional && access(b.path.c_str(), R_OK) != 0) return false;
    }
    if (spec.compile && access(spec.compile->argv[0].c_str(), X_OK) != 0) return false;
    return !spec.version_argv.empty() && access(spec.version_argv[0].c_str(), X_OK) == 0;
  }
  const std::string& tool = spec.compile ? spec.compile->argv[0] : spec.run_argv[0];
  if (access(tool.c_str(), X_OK) != 0) return false;
  return access(spec.run_argv[0].c_str(), X_OK) == 0 || spec.run_argv[0].rfind("/work/", 0) == 0;
}

}  // namespace airlock::runtimes
