#include "engine/js/ruby_runner.h"

#include <js/ContextOptions.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/js/wasi_runner.h"
#include "engine/js/wasm_command.h"

namespace airlock::engine::js {
namespace {

// ruby-init's arguments: the options `ruby` would get (the program itself
// comes later, from the bootstrap; "-e_=0" keeps ruby_options from reading
// stdin as the script). --disable-gems: see ruby_bootstrap.cc.
const std::vector<std::string> kInitArgs = {"ruby", "-EUTF-8", "--disable-gems", "--disable-syntax_suggest",
                                            "-e_=0"};

// ruby.wasm's exports (wit-bindgen's legacy names carry the signature).
constexpr char kRubyInit[] = "ruby-init: func(args: list<string>) -> ()";
constexpr char kEvalProtect[] = "rb-eval-string-protect: func(str: string) -> tuple<handle<rb-abi-value>, s32>";

// The JavaScript-interop imports of the js gem ("rb-js-abi-host"): none has
// a host here. Ruby calls them only after `require "js"`.
constexpr const char* kJsInterop[] = {
    "eval-js: func(code: string) -> variant { success(handle<js-abi-value>), failure(handle<js-abi-value>) }",
    "is-js: func(value: handle<js-abi-value>) -> bool",
    "instance-of: func(value: handle<js-abi-value>, klass: handle<js-abi-value>) -> bool",
    "global-this: func() -> handle<js-abi-value>",
    "int-to-js-number: func(value: s32) -> handle<js-abi-value>",
    "float-to-js-number: func(value: float64) -> handle<js-abi-value>",
    "string-to-js-string: func(value: string) -> handle<js-abi-value>",
    "bool-to-js-bool: func(value: bool) -> handle<js-abi-value>",
    "proc-to-js-function: func(value: u32) -> handle<js-abi-value>",
    "rb-object-to-js-rb-value: func(raw-rb-abi-value: u32) -> handle<js-abi-value>",
    "js-value-to-string: func(value: handle<js-abi-value>) -> string",
    "js-value-to-integer: func(value: handle<js-abi-value>) -> variant { as-float(float64), bignum(string) }",
    "export-js-value-to-host: func(value: handle<js-abi-value>) -> ()",
    "import-js-value-from-host: func() -> handle<js-abi-value>",
    "js-value-typeof: func(value: handle<js-abi-value>) -> string",
    "js-value-equal: func(lhs: handle<js-abi-value>, rhs: handle<js-abi-value>) -> bool",
    "js-value-strictly-equal: func(lhs: handle<js-abi-value>, rhs: handle<js-abi-value>) -> bool",
    "reflect-apply: func(target: handle<js-abi-value>, this-argument: handle<js-abi-value>, arguments: "
    "list<handle<js-abi-value>>) -> variant { success(handle<js-abi-value>), failure(handle<js-abi-value>) }",
    "reflect-get: func(target: handle<js-abi-value>, property-key: string) -> variant { "
    "success(handle<js-abi-value>), failure(handle<js-abi-value>) }",
    "reflect-set: func(target: handle<js-abi-value>, property-key: string, value: handle<js-abi-value>) -> variant "
    "{ success(handle<js-abi-value>), failure(handle<js-abi-value>) }",
};

WasmOutcome Invalid(std::string message) {
  WasmOutcome out;
  out.kind = WasmOutcome::Kind::kInvalid;
  out.message = std::move(message);
  return out;
}

// The imports ruby.wasm needs beyond WASI. Handles (canonical_abi resources)
// are the guest's own values: nothing on this side keeps a table of them.
void AddRubyImports(std::vector<HostImport>& imports) {
  for (const char* name : kJsInterop) {
    imports.push_back({"rb-js-abi-host", name, 0, [name](std::span<uint8_t>, std::span<const uint64_t>) {
                         return HostResult::Fail(std::string("Ruby's JavaScript interop (require \"js\") is not "
                                                             "available in the sandbox (called ") +
                                                 std::string(name, std::strcspn(name, ":")) + ")");
                       }});
  }
  imports.push_back({"rb-js-abi-host", "rb_wasm_throw_prohibit_rewind_exception", 2,
                     [](std::span<uint8_t> mem, std::span<const uint64_t> a) {
                       std::string what = "ruby.wasm refused to rewind its stack";
                       if (a.size() == 2 && a[0] <= mem.size() && a[1] <= mem.size() - a[0]) {
                         what += ": " + std::string(reinterpret_cast<const char*>(mem.data() + a[0]), a[1]);
                       }
                       return HostResult::Fail(what);
                     }});
  auto identity = [](std::span<uint8_t>, std::span<const uint64_t> a) {
    return HostResult::Value(a.empty() ? 0 : static_cast<int32_t>(a[0]));
  };
  imports.push_back({"canonical_abi", "resource_new_rb-abi-value", 1, identity});
  imports.push_back({"canonical_abi", "resource_get_rb-abi-value", 1, identity});
  imports.push_back({"canonical_abi", "resource_drop_js-abi-value", 1,
                     [](std::span<uint8_t>, std::span<const uint64_t>) { return HostResult::Value(0); }});
}

// Copies `bytes` into fresh guest memory from cabi_realloc; `*ptr` is where.
WasmOutcome Put(WasmInstance& inst, std::string_view bytes, uint32_t align, int32_t* ptr) {
  WasmOutcome r = inst.Call("cabi_realloc", std::vector<int32_t>{0, 0, static_cast<int32_t>(align),
                                                                 static_cast<int32_t>(bytes.size())},
                            ptr);
  if (r.kind != WasmOutcome::Kind::kReturned) return r;
  std::span<uint8_t> mem = inst.Memory();
  const uint32_t at = static_cast<uint32_t>(*ptr);
  if (at == 0 || at > mem.size() || bytes.size() > mem.size() - at) {
    WasmOutcome out;
    out.kind = WasmOutcome::Kind::kError;
    out.message = "cabi_realloc returned memory outside the guest";
    return out;
  }
  std::memcpy(mem.data() + at, bytes.data(), bytes.size());
  return r;
}

// A string in the canonical ABI as ruby.wasm reads it: a C string (NUL
// included in the length, as ruby.wasm's own JavaScript passes it).
WasmOutcome PutString(WasmInstance& inst, const std::string& s, int32_t* ptr, int32_t* len) {
  std::string c = s;
  c.push_back('\0');
  *len = static_cast<int32_t>(c.size());
  return Put(inst, c, 1, ptr);
}

void PutI32(std::string& out, int32_t v) {
  const uint32_t u = static_cast<uint32_t>(v);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

// Everything after instantiation: start Ruby, then run the bootstrap.
WasmOutcome RunRubyIn(WasmInstance& instance, WasiGuest& guest);

WasmOutcome RunRuby(WasiGuest& guest) {
  if (guest.argv.size() < 2) return Invalid("usage: --wasi-ruby RUBY.wasm [flags] -- ruby SCRIPT [ARG...]");
  AddRubyImports(guest.imports);
  // Baseline code only. With tiering, SpiderMonkey also compiles the whole
  // 30 MB module with Ion in the background: seconds of CPU and ~200 MB more
  // memory, for nothing, since the interpreter loop (one long-running call)
  // never switches to the new code. Measured: hello world 1.6 s / 260 MB
  // peak with tiering, 1.0 s / 210 MB without; a busy loop runs as fast.
  JS::ContextOptionsRef(guest.engine.cx()).setWasmIon(false);
  WasmOutcome failure;
  std::unique_ptr<WasmInstance> inst =
      WasmInstance::Create(guest.engine, guest.module, guest.imports, &failure, guest.compiled);
  if (!inst) return failure;
  WasmOutcome r = RunRubyIn(*inst, guest);
  r.memory_bytes = inst->Memory().size();  // for the memory-limit mapping (wasi_runner.h)
  return r;
}

WasmOutcome RunRubyIn(WasmInstance& instance, WasiGuest& guest) {
  for (const char* name : {"_initialize", "cabi_realloc", kRubyInit, kEvalProtect}) {
    if (!instance.HasFunction(name)) return Invalid(std::string("not ruby.wasm: no export \"") + name + "\"");
  }
  WasmOutcome r = instance.Call("_initialize", {});
  if (r.kind != WasmOutcome::Kind::kReturned) return r;

  // ruby-init(list<string>): a list of (ptr, len) pairs.
  std::string list;
  for (const std::string& arg : kInitArgs) {
    int32_t ptr = 0, len = 0;
    r = PutString(instance, arg, &ptr, &len);
    if (r.kind != WasmOutcome::Kind::kReturned) return r;
    PutI32(list, ptr);
    PutI32(list, len);
  }
  int32_t list_ptr = 0;
  r = Put(instance, list, 4, &list_ptr);
  if (r.kind != WasmOutcome::Kind::kReturned) return r;
  r = instance.Call(kRubyInit, std::vector<int32_t>{list_ptr, static_cast<int32_t>(kInitArgs.size())});
  if (r.kind != WasmOutcome::Kind::kReturned) return r;

  // The program: the bootstrap ends with exit!, so a return means it failed.
  // Pre-started, everything up to here was paid before the run; the run's
  // arguments come with the hand-over.
  // `ruby -e CODE ARGS`: the code evaluated at top level (a session's
  // harness, which reads its turns from the guest's control descriptor).
  const bool inline_code = guest.argv[1] == "-e" && guest.argv.size() >= 3;
  std::vector<std::string> args(guest.argv.begin() + (inline_code ? 3 : 2), guest.argv.end());
  if (guest.hand_over) {
    std::vector<std::string> handed = guest.hand_over();
    args.insert(args.end(), handed.begin(), handed.end());
  }
  int32_t code_ptr = 0, code_len = 0;
  r = PutString(instance,
                RubyBootstrap(guest.argv[1], args, inline_code ? std::optional<std::string>(guest.argv[2]) : std::nullopt),
                &code_ptr, &code_len);
  if (r.kind != WasmOutcome::Kind::kReturned) return r;
  int32_t ret_area = 0;
  r = instance.Call(kEvalProtect, std::vector<int32_t>{code_ptr, code_len}, &ret_area);
  if (r.kind != WasmOutcome::Kind::kReturned) return r;
  // tuple<handle, s32> in the return area: the state is Ruby's jump tag.
  int32_t state = -1;
  std::span<uint8_t> mem = instance.Memory();
  const uint32_t at = static_cast<uint32_t>(ret_area);
  if (at <= mem.size() && mem.size() - at >= 8) std::memcpy(&state, mem.data() + at + 4, 4);
  WasmOutcome out;
  out.kind = WasmOutcome::Kind::kError;
  out.message = "the Ruby bootstrap returned instead of exiting (state " + std::to_string(state) + ")";
  return out;
}

}  // namespace

int RubyMain(int argc, char** argv, const EngineOptions& base) { return WasiMainWith(argc, argv, base, RunRuby); }

}  // namespace airlock::engine::js
