// wasm::LoadTar on arbitrary archives into a small VFS: never a crash, never
// an entry outside the destination, never past the VFS's limits. The same
// bytes read as a tar index (wasm/tar_index.h) of themselves: refused or
// every entry inside the archive; and a walkable archive's own index loads
// it exactly as the walk did.
#include <cstdlib>
#include <string_view>

#include "fuzz_support.h"
#include "wasm/tar_index.h"
#include "wasm/tar_reader.h"
#include "wasm/vfs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace airlock::wasm;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Vfs vfs(VfsLimits{.max_bytes = 1 << 20, .max_nodes = 256});
  auto dest = vfs.MakeDirs("usr/lib");
  if (!dest.ok()) abort();
  auto outside = vfs.MakeDirs("work");
  if (!outside.ok()) abort();
  auto st = LoadTar(bytes, vfs, *dest);
  // Nothing may land beside the destination: /work stays empty and the
  // root holds only usr and work.
  if (!(*outside)->children().empty()) abort();
  if (vfs.root()->children().size() != 2) abort();

  auto entries = DecodeTarIndex(bytes, bytes);
  if (entries.ok()) {
    for (const TarEntry& e : *entries) {
      if (e.offset > size || e.size > size - e.offset) abort();
    }
  }
  if (st.ok()) {
    auto index = EncodeTarIndex(bytes);
    if (!index.ok()) abort();
    auto decoded = DecodeTarIndex(bytes, *index);
    if (!decoded.ok()) abort();
    Vfs other(VfsLimits{.max_bytes = 1 << 20, .max_nodes = 256});
    auto dest2 = other.MakeDirs("usr/lib");
    if (!dest2.ok()) abort();
    auto st2 = LoadTarEntries(bytes, *decoded, other, *dest2);
    if (!st2.ok() || st2->files != st->files || st2->dirs != st->dirs || st2->bytes != st->bytes) abort();
  }
  return 0;
}
