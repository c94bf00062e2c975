// wasm::CapMemory on arbitrary module bytes: never a crash, and a module it
// accepts is a fixed point (capping the capped module changes nothing) whose
// memories all have a maximum within the cap.
#include <cstdlib>

#include "fuzz_support.h"
#include "wasm/module_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using airlock::wasm::CapMemory;
  airlock::fuzz::FuzzInput in(data, size);
  uint64_t cap = (1 + in.Byte() % 64) * airlock::wasm::kWasmPageBytes * (1 + in.Byte());
  std::string module = in.Rest();
  auto capped = CapMemory(module, cap);
  if (!capped.ok()) return 0;
  auto again = CapMemory(*capped, cap);
  if (!again.ok() || *again != *capped) abort();
  return 0;
}
