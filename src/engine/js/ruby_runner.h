// `airlock-js --wasi-ruby RUBY.wasm ...`: runs a Ruby program with ruby.wasm
// (the npm package @ruby/3.4-wasm-wasi's ruby+stdlib.wasm, cached by
// scripts/wasm/install_ruby.sh) in the embedded engine — the WASM tier's Ruby.
//
//   airlock-js --wasi-ruby RUBY.wasm [the flags of --wasi: --heap-mb, --deadline-ms,
//              --wasm-max-mb, --max-output-bytes, --tar, --work, --env]
//              -- ruby SCRIPT [ARG...]      (or -- ruby -e CODE [ARG...])
//
// ruby.wasm is a WASI *reactor*: it has no _start, only an API exported in
// wit-bindgen's legacy canonical ABI. The runner instantiates it once
// (WasmInstance) and then calls, in order:
//   _initialize                      wasi-libc and wasi-vfs constructors
//   ruby-init(["ruby", "-EUTF-8", "-e_=0"])   the VM, RubyGems, load path
//   rb-eval-string-protect(BOOTSTRAP)
// Strings and lists are written into the guest's memory through its own
// allocator (cabi_realloc). The bootstrap sets $0 and ARGV, runs SCRIPT with
// `load` (relative to the work dir, so backtraces read "main.rb:2:in ..."),
// prints an uncaught exception as `ruby` does (the program's frames only) and
// ends the process with its status through exit!: `exit 3` is 3, an uncaught
// exception 1; at_exit blocks run first (END blocks do not), then every open
// IO is flushed.
//
// Ruby's standard library lives inside the module (wasi-vfs packs it at
// /usr/local/lib/ruby); the guest's other files are the --tar and --work
// trees, as for --wasi. Ruby's JavaScript interop (require "js") has no host
// here: its imports (rb-js-abi-host) fail the run with a clear message.
//
// Exit status and limits as for --wasi (wasi_runner.h): the program's own
// status, 124 at the deadline, 137 out of memory, 134 for a trap, 2 for bad
// usage or a module that is not ruby.wasm.
#ifndef AIRLOCK_ENGINE_JS_RUBY_RUNNER_H_
#define AIRLOCK_ENGINE_JS_RUBY_RUNNER_H_

#include <optional>
#include <string>
#include <vector>

#include "engine/js/js_engine.h"

namespace airlock::engine::js {

// argv[1] is "--wasi-ruby"; `base` as for WasiMain.
int RubyMain(int argc, char** argv, const EngineOptions& base);

// The Ruby code that runs `script` with ARGV = `args` (or, given `code`,
// evaluates it at top level as `ruby -e` does, $0 "-e"), all embedded as
// escaped string literals (ruby_bootstrap.cc).
std::string RubyBootstrap(const std::string& script, const std::vector<std::string>& args,
                          const std::optional<std::string>& code = std::nullopt);

}  // namespace airlock::engine::js

#endif  // AIRLOCK_ENGINE_JS_RUBY_RUNNER_H_
