// The WASM tier's languages (isolation "wasm"): programs that run inside the
// embedded engine (airlock-js, SpiderMonkey), itself inside the jail, with no
// host system interface of their own.
#include "runtimes/language.h"
#include "runtimes/prestart_harness.h"
#include "runtimes/session_harness.h"

#include <cstdlib>
#include <filesystem>

namespace airlock::runtimes {

std::string DefaultWasmCacheDir() {
  const char* env = getenv("AIRLOCK_WASM_CACHE");
  return env != nullptr && env[0] == '/' ? env : "/var/cache/airlock/wasm";
}

namespace {

// What every cached WASI interpreter shares: airlock-js and the cache dir
// bound read-only into the jail, the version from the cache's MANIFEST
// (`version_key`=...), the engine's exit codes for its own limits.
LanguageSpec InterpreterSpec(const std::string& airlock_js_path, const std::filesystem::path& cache_dir,
                             const char* jail_dir, const std::string& version_key) {
  LanguageSpec spec;
  spec.version_argv = {"/bin/sed", "-n", "s/^" + version_key + "=//p", (cache_dir / "MANIFEST").string()};
  spec.binds = {{airlock_js_path, false, kJailAirlockJsPath}, {cache_dir.string(), false, jail_dir}};
  spec.max_pids = 16;  // the engine's helper threads
  spec.isolation = "wasm";
  spec.engine_exit_deadline = 124;  // src/engine/js/wasi_runner.h
  spec.engine_exit_out_of_memory = 137;
  return spec;
}

// The engine's own environment (the guest sees only its --env): glibc's
// malloc asks for transparent huge pages (madvise) for its large chunks,
// where the module's bytes, its compiled code and the guest's start-up state
// land: a CPython start takes 30 000 page faults fewer and about a fifth
// less CPU (docs/performance.md, "Huge pages for the engine's heap"). glibc
// reads the THP mode and size from sysfs when malloc starts; the jail has no
// /sys, so those two files (settings, no counters) are bound read-only.
// Without them (no THP on the host) the tunable does nothing. Not for Ruby:
// its idle pooled interpreter kept 3 MiB more (97 -> 100 MiB PSS).
//
// mmap_threshold at glibc's largest (32 MiB): chunks of 128 KiB-32 MiB (the
// loaded code's metadata, 10 MB in a few chunks) come from the thread's
// arena, whose 64 MiB heaps are aligned so huge pages cover them, instead of
// one unaligned mmap each that huge pages barely cover: a cached CPython
// start faults ~6 400 -> ~4 000 pages and takes ~7 ms (a tenth) less CPU
// (docs/performance.md, "Huge pages for the engine's heap").
void UseMallocHugePages(LanguageSpec& spec) {
  spec.extra_env.push_back("GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432");
  for (const char* f : {"enabled", "hpage_pmd_size"}) {
    spec.binds.push_back({std::string("/sys/kernel/mm/transparent_hugepage/") + f});
  }
}

}  // namespace

std::vector<LanguageSpec> WasmTierLanguages(const std::string& airlock_js_path, const std::string& wasm_cache_dir) {
  std::vector<LanguageSpec> all;
  if (airlock_js_path.empty()) return all;

  LanguageSpec js;
  js.name = "javascript";
  js.display_name = "JavaScript";
  js.source_file = "main.js";
  js.version_argv = {airlock_js_path, "--version"};
  js.run_argv = {kJailAirlockJsPath, "--bridge-fd", "none", "--heap-mb", "{heap_mb}", "--deadline-ms",
                 "{timeout_ms}", "main.js"};
  // Pre-started: the engine and its globals are up; main.js is read after
  // the hand-over, which brings the deadline and the arguments.
  js.prestart_argv = {kJailAirlockJsPath, "--bridge-fd", "none", "--heap-mb", "{heap_mb}", "--resume-fd", "3",
                      "main.js"};
  js.prestart_takes_timeout = true;
  js.binds = {{airlock_js_path, false, kJailAirlockJsPath}};
  js.max_pids = 16;  // the engine's helper threads
  js.isolation = "wasm";
  js.engine_exit_deadline = 124;  // src/engine/js/js_main.cc
  js.engine_exit_out_of_memory = 3;
  js.notes = "SpiderMonkey with only the ECMAScript built-ins, console and scriptArgs: no modules, files, network, "
             "process or stdin; top-level await and return work";
  // Sessions: one engine and global, cells read from the jail's control
  // socket (engine/js/js_session.h); no stdin in this tier.
  js.session_argv = {kJailAirlockJsPath, "--session", "--control-fd", "3", "--heap-mb", "{heap_mb}"};
  js.session_stdin = false;
  all.push_back(js);

  // C and C++: compiled to wasm32-wasi in the jail with Debian's clang-16,
  // wasi-libc and libc++, then run by airlock-js --wasi over an in-memory
  // filesystem that holds a copy of /work (written back when it ends).
  const std::vector<std::string> run = {kJailAirlockJsPath, "--wasi", "main.wasm", "--heap-mb", "{heap_mb}",
                                        "--wasm-max-mb", "{heap_mb}", "--deadline-ms", "{timeout_ms}",
                                        "--work", "/work=/work", "--", "main"};
  LanguageSpec c;
  c.name = "c";
  c.display_name = "C";
  c.source_file = "main.c";
  c.version_argv = {"/usr/bin/clang-16", "--version"};
  c.compile = CompileStep{{"/usr/bin/clang-16", "--target=wasm32-wasi", "--sysroot=/usr", "-O2", "-Wall", "-o",
                           "main.wasm", "main.c", "-lm"},
                          30'000, "main.wasm"};
  c.run_argv = run;
  c.binds = js.binds;
  c.max_pids = 16;
  c.default_memory_mb = 512;
  c.isolation = "wasm";
  c.engine_exit_deadline = 124;  // src/engine/js/wasi_runner.h (a C program's own exit(3) stays its own)
  c.engine_exit_out_of_memory = 137;
  c.notes = "clang-16 --target=wasm32-wasi -O2 (wasi-libc); runs in the engine: no processes, sockets or host files";
  all.push_back(c);

  LanguageSpec cpp = c;
  cpp.name = "cpp";
  cpp.display_name = "C++";
  cpp.source_file = "main.cpp";
  cpp.version_argv = {"/usr/bin/clang++-16", "--version"};
  cpp.compile = CompileStep{{"/usr/bin/clang++-16", "--target=wasm32-wasi", "--sysroot=/usr", "-O2", "-Wall",
                             "-std=c++20", "-nostdinc++", "-isystem", "/usr/lib/llvm-16/include/wasm32-wasi/c++/v1",
                             "-fno-exceptions", "-L/usr/lib/llvm-16/lib/wasm32-wasi", "-o", "main.wasm", "main.cpp"},
                            45'000, "main.wasm"};
  cpp.notes = "clang++-16 --target=wasm32-wasi -O2 -std=c++20, libc++ without exceptions; runs in the engine";
  all.push_back(cpp);

  // Python: CPython built for wasm32-wasi (scripts/wasm/build_python.sh);
  // its standard library is a tar loaded read-only at /usr in the guest.
  // CPython's standard library is a tar loaded into the engine's VFS; once
  // the store has written its index ("{tar_index}", LanguageSpec::wasm_tar)
  // a start reads that instead of the tar's 2 000 headers.
  //
  // Python and PHP run on baseline code only (--wasm-baseline): their
  // interpreter loop is one long call that never moves to Ion's code, and
  // Ion's background compile of the module cost ~0.5-1 s of CPU and ~65 MB
  // per process for no speed (docs/wasm.md, "Compilation tiers"). Once the
  // runner's WasmCodeStore has written their Ion code ("{code_cache}",
  // LanguageSpec::wasm_module), they load that instead and compile nothing.
  std::error_code ec;
  const std::filesystem::path py_dir = std::filesystem::canonical(wasm_cache_dir + "/python", ec);
  if (!ec) {
    LanguageSpec py = InterpreterSpec(airlock_js_path, py_dir, kJailWasmPythonDir, "PYTHON_VERSION");
    UseMallocHugePages(py);
    py.name = "python";
    py.display_name = "Python";
    py.source_file = "main.py";
    py.wasm_module = (py_dir / "python.wasm").string();
    py.wasm_tar = (py_dir / "python-stdlib.tar").string();
    py.run_argv = {kJailAirlockJsPath, "--wasi", std::string(kJailWasmPythonDir) + "/python.wasm",
                   "--code-cache", "{code_cache}", "--wasm-baseline", "--tar",
                   std::string(kJailWasmPythonDir) + "/python-stdlib.tar=/usr", "--tar-index", "{tar_index}",
                   "--env", "PYTHONHOME=/usr", "--env", "PYTHONDONTWRITEBYTECODE=1", "--heap-mb", "{heap_mb}",
                   "--wasm-max-mb", "{heap_mb}", "--deadline-ms", "{timeout_ms}", "--work", "/work=/work", "--",
                   "python", "main.py"};
    py.prestart_argv = {kJailAirlockJsPath, "--wasi", std::string(kJailWasmPythonDir) + "/python.wasm",
                        "--code-cache", "{code_cache}", "--wasm-baseline", "--tar",
                        std::string(kJailWasmPythonDir) + "/python-stdlib.tar=/usr", "--tar-index", "{tar_index}",
                        "--env", "PYTHONHOME=/usr", "--env", "PYTHONDONTWRITEBYTECODE=1", "--heap-mb", "{heap_mb}",
                        "--wasm-max-mb", "{heap_mb}", "--work", "/work=/work", "--resume-fd", "3", "--", "python",
                        "-c", std::string(WasmPythonPrestartHarness())};
    py.prestart_takes_timeout = true;
    // Sessions: the harness reads its turns from the control channel the
    // engine offers at the guest's fd 1000 (--control-fd; the work dir
    // crosses each turn's boundary there). With the reactor build
    // (python-session.wasm, engine/js/python_session.h) the host drives
    // each turn, so a session can be paused, resumed and forked
    // (session_checkpoints); a cache built before it runs sessions on the
    // command module, without checkpoints.
    const bool reactor = std::filesystem::exists(py_dir / "python-session.wasm", ec);
    const std::vector<std::string> session_head =
        reactor ? std::vector<std::string>{kJailAirlockJsPath, "--wasi-session",
                                           std::string(kJailWasmPythonDir) + "/python-session.wasm",
                                           "--code-cache", "{session_code_cache}"}
                : std::vector<std::string>{kJailAirlockJsPath, "--wasi",
                                           std::string(kJailWasmPythonDir) + "/python.wasm", "--code-cache",
                                           "{code_cache}"};
    const std::vector<std::string> session_flags = {
        "--wasm-baseline", "--tar", std::string(kJailWasmPythonDir) + "/python-stdlib.tar=/usr", "--tar-index",
        "{tar_index}", "--env", "PYTHONHOME=/usr", "--env", "PYTHONDONTWRITEBYTECODE=1", "--heap-mb", "{heap_mb}",
        "--wasm-max-mb", "{heap_mb}", "--work", "/work=/work", "--control-fd", "3"};
    const std::vector<std::string> session_tail = {
        "--", "python", "-c",
        std::string(reactor ? WasmPythonReactorSessionHarness() : WasmPythonSessionHarness())};
    py.session_argv = session_head;
    py.session_argv.insert(py.session_argv.end(), session_flags.begin(), session_flags.end());
    py.session_argv.insert(py.session_argv.end(), session_tail.begin(), session_tail.end());
    py.session_checkpoints = reactor;
    if (reactor) py.wasm_session_module = (py_dir / "python-session.wasm").string();
    py.notes = "CPython compiled to wasm32-wasi, standard library only (no sockets, threads or subprocesses)";
    all.push_back(py);
  }

  // Ruby: ruby.wasm from npm (scripts/wasm/install_ruby.sh), a reactor
  // module with its standard library inside, driven by airlock-js --wasi-ruby.
  const std::filesystem::path rb_dir = std::filesystem::canonical(wasm_cache_dir + "/ruby", ec);
  if (!ec) {
    LanguageSpec rb = InterpreterSpec(airlock_js_path, rb_dir, kJailWasmRubyDir, "RUBY_VERSION");
    rb.name = "ruby";
    rb.display_name = "Ruby";
    rb.source_file = "main.rb";
    // No compiled-code cache for Ruby (LanguageSpec::wasm_module): its Ion
    // code is 55 MB, which each process would hold as its own memory (an
    // idle pooled Ruby went from 99 to 146 MiB PSS; docs/wasm.md).
    rb.run_argv = {kJailAirlockJsPath, "--wasi-ruby", std::string(kJailWasmRubyDir) + "/ruby.wasm", "--heap-mb",
                   "{heap_mb}", "--wasm-max-mb", "{heap_mb}", "--deadline-ms", "{timeout_ms}", "--work",
                   "/work=/work", "--", "ruby", "main.rb"};
    // Pre-started: the module compiled and instantiated, the VM booted
    // (ruby-init); the hand-over brings the deadline and the arguments, and
    // main.rb is loaded after it.
    rb.prestart_argv = {kJailAirlockJsPath, "--wasi-ruby", std::string(kJailWasmRubyDir) + "/ruby.wasm",
                        "--heap-mb", "{heap_mb}", "--wasm-max-mb", "{heap_mb}", "--work", "/work=/work",
                        "--resume-fd", "3", "--", "ruby", "main.rb"};
    rb.prestart_takes_timeout = true;
    rb.session_argv = {kJailAirlockJsPath, "--wasi-ruby", std::string(kJailWasmRubyDir) + "/ruby.wasm",
                       "--heap-mb", "{heap_mb}", "--wasm-max-mb", "{heap_mb}", "--work", "/work=/work",
                       "--control-fd", "3", "--control-guest-fd", "0", "--", "ruby", "-e",
                       std::string(WasmRubySessionHarness())};
    rb.default_memory_mb = 512;  // ~210 MB before the program allocates (the module's code, stdlib in memory)
    rb.notes = "CRuby (ruby.wasm from npm) with its standard library and bundled gems, RubyGems loaded on first use; "
               "no sockets, threads, subprocesses or JS interop";
    all.push_back(rb);
  }

  // PHP: the CLI built for wasm32-wasi from Debian's php8.2 source
  // (scripts/wasm/build_php.sh), extensions built in, no php.ini.
  const std::filesystem::path php_dir = std::filesystem::canonical(wasm_cache_dir + "/php", ec);
  if (!ec) {
    LanguageSpec php = InterpreterSpec(airlock_js_path, php_dir, kJailWasmPhpDir, "PHP_VERSION");
    UseMallocHugePages(php);
    php.name = "php";
    php.display_name = "PHP";
    php.source_file = "main.php";
    const std::string wasm = std::string(kJailWasmPhpDir) + "/php.wasm";
    php.wasm_module = (php_dir / "php.wasm").string();
    // No php.ini in the build: the settings in which Debian's php.ini for
    // the CLI differs from PHP's built-in defaults, so a program prints and
    // fails as it does in the native tier (errors on stderr as "PHP Fatal
    // error: ...", no deprecation notices, no `<?` tags, traces without
    // argument values; memory bounded by the run's limit, not PHP's 128M).
    const std::vector<std::string> ini = {"-d", "display_errors=0", "-d", "log_errors=1",
                                          "-d", "error_reporting=22527", "-d", "memory_limit=-1",
                                          "-d", "short_open_tag=0", "-d", "zend.exception_ignore_args=1"};
    php.run_argv = {kJailAirlockJsPath, "--wasi",        wasm,         "--code-cache", "{code_cache}",
                    "--wasm-baseline",  "--heap-mb",     "{heap_mb}",  "--wasm-max-mb", "{heap_mb}",
                    "--deadline-ms",    "{timeout_ms}",  "--work",     "/work=/work",   "--",
                    "php"};
    php.run_argv.insert(php.run_argv.end(), ini.begin(), ini.end());
    php.run_argv.push_back("main.php");
    // Pre-started: the module compiled and PHP's modules started; the
    // harness (php -r) reads the hand-over from its stdin, then requires
    // main.php.
    php.prestart_argv = {kJailAirlockJsPath, "--wasi", wasm, "--code-cache", "{code_cache}", "--wasm-baseline",
                         "--heap-mb", "{heap_mb}", "--wasm-max-mb", "{heap_mb}", "--work", "/work=/work",
                         "--resume-fd", "3", "--", "php"};
    php.prestart_argv.insert(php.prestart_argv.end(), ini.begin(), ini.end());
    php.prestart_argv.insert(php.prestart_argv.end(), {"-r", std::string(WasmPhpPrestartHarness())});
    php.prestart_takes_timeout = true;
    // Sessions: eval() at global scope, turns over the guest's fd 1000 (the
    // engine's control channel, --control-fd); no stdin, as natively.
    php.session_argv = {kJailAirlockJsPath, "--wasi", wasm, "--code-cache", "{code_cache}", "--wasm-baseline",
                        "--heap-mb", "{heap_mb}", "--wasm-max-mb", "{heap_mb}", "--work", "/work=/work",
                        "--control-fd", "3", "--", "php"};
    php.session_argv.insert(php.session_argv.end(), ini.begin(), ini.end());
    php.session_argv.insert(php.session_argv.end(), {"-r", std::string(WasmPhpSessionHarness())});
    php.session_stdin = false;
    php.notes = "PHP 8.2 CLI compiled to wasm32-wasi (Core, date, hash, json, pcre, random, Reflection, SPL, "
                "standard, bcmath, calendar, ctype, filter, mbstring, tokenizer); no sockets, processes, Fibers "
                "or XML";
    all.push_back(php);
  }
  return all;
}

}  // namespace airlock::runtimes
