// wasm::LoadTar on arbitrary archives into a small VFS: never a crash, never
// an entry outside the destination, never past the VFS's limits.
#include <cstdlib>

#include "fuzz_support.h"
#include "wasm/tar_reader.h"
#include "wasm/vfs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace airlock::wasm;
  Vfs vfs(VfsLimits{.max_bytes = 1 << 20, .max_nodes = 256});
  auto dest = vfs.MakeDirs("usr/lib");
  if (!dest.ok()) abort();
  auto outside = vfs.MakeDirs("work");
  if (!outside.ok()) abort();
  auto st = LoadTar(std::string_view(reinterpret_cast<const char*>(data), size), vfs, *dest);
  (void)st;
  // Nothing may land beside the destination: /work stays empty and the
  // root holds only usr and work.
  if (!(*outside)->children().empty()) abort();
  if (vfs.root()->children().size() != 2) abort();
  return 0;
}
