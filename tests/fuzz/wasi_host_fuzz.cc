// wasm::WasiContext: sequences of preview1 calls with arbitrary arguments
// against a VFS holding a preopened /work (a file and a directory) and a
// 64 KiB guest memory whose first bytes come from the input. Every call must
// return an errno (or kStop after proc_exit), never touch memory outside the
// guest's, and leave the VFS within its limits.
#include <cstdlib>
#include <vector>

#include "fuzz_support.h"
#include "wasm/vfs.h"
#include "wasm/wasi.h"

namespace {

using namespace airlock::wasm;

// Mostly small values (pointers and lengths inside the 64 KiB memory, small
// fds), sometimes anything.
uint64_t Arg(airlock::fuzz::FuzzInput& in, WasmType type) {
  uint8_t kind = in.Byte();
  if (kind < 96) return kind % 16;                                     // fds, flags, whence, small counts
  if (kind < 224) return (uint64_t{in.Byte()} << 8) | in.Byte();      // within memory
  return type == WasmType::kI64 ? in.U64() : in.U32();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  airlock::fuzz::FuzzInput in(data, size);
  Vfs vfs(VfsLimits{.max_bytes = 256 << 10, .max_nodes = 64}, [] { return uint64_t{1'700'000'000'000'000'000}; });
  auto work = vfs.MakeDirs("work");
  auto sub = vfs.MakeDirs("work/sub");
  if (!work.ok() || !sub.ok()) abort();
  if (!vfs.AddFile(*work, "a.txt", "hello\nworld\n").ok()) abort();

  WasiOptions options;
  options.args = {"prog", "arg"};
  options.env = {"A=1"};
  options.preopens = {{"/work", *work}};
  options.stdin_bytes = "input line\n";
  options.stdout_cap = 4096;
  options.stderr_cap = 4096;
  options.max_fds = 32;
  options.deadline_monotonic_ns = 2'000'000'000;
  uint64_t now = 1'000'000'000;
  options.host.realtime_ns = [&] { return now; };
  options.host.monotonic_ns = [&] { return now; };
  options.host.cputime_ns = [&] { return now; };
  options.host.sleep_ns = [&](uint64_t ns) { now += ns < 1'000'000'000 ? ns : 1'000'000'000; };
  options.host.random = [](std::span<uint8_t> out) {
    for (uint8_t& b : out) b = 0x5a;
  };
  WasiContext wasi(vfs, std::move(options));

  // Guest memory: a fixed size, its start seeded from the input.
  std::vector<uint8_t> memory(64 << 10);
  std::string seed = in.Bytes(255);
  for (size_t i = 0; i < seed.size(); ++i) memory[i * 64 % memory.size()] = seed[i];
  for (size_t i = 0; i < seed.size() && 4096 + i < memory.size(); ++i) memory[4096 + i] = seed[i];

  const auto& imports = WasiContext::Imports();
  for (int calls = 0; calls < 64 && !in.empty(); ++calls) {
    size_t index = in.Byte() % imports.size();
    std::vector<uint64_t> args;
    for (WasmType t : imports[index].params) args.push_back(Arg(in, t));
    uint32_t r = wasi.Call(index, memory, args);
    if (r == WasiContext::kStop) break;
    if (r > 76) abort();  // preview1 errnos are 0..76
  }
  return 0;
}
