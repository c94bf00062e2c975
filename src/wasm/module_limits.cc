#include "wasm/module_limits.h"

#include <algorithm>

namespace airlock::wasm {
namespace {

// A bounds-checked reader over the module bytes.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool done() const { return pos_ >= b_.size(); }
  size_t pos() const { return pos_; }

  StatusOr<uint8_t> Byte() {
    if (pos_ >= b_.size()) return InvalidArgument("wasm: unexpected end of module");
    return static_cast<uint8_t>(b_[pos_++]);
  }
  // Unsigned LEB128 of at most `bits` bits.
  StatusOr<uint64_t> U(int bits) {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (shift >= bits + 7) return InvalidArgument("wasm: LEB128 number too long");
      AIRLOCK_ASSIGN_OR_RETURN(uint8_t byte, Byte());
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    if (bits < 64 && (v >> bits) != 0) return InvalidArgument("wasm: LEB128 number out of range");
    return v;
  }
  StatusOr<std::string_view> Bytes(uint64_t n) {
    if (n > b_.size() - pos_) return InvalidArgument("wasm: section or name runs past the end");
    std::string_view out = b_.substr(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

void PutU(std::string& out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (v != 0);
}

// Reads one `limits` and appends it capped to `max_pages`.
Status CapLimits(Reader& r, std::string& out, uint64_t max_pages) {
  AIRLOCK_ASSIGN_OR_RETURN(uint8_t flags, r.Byte());
  if (flags > 1) {
    return InvalidArgument("wasm: shared or 64-bit memories are not supported (limits flags " +
                           std::to_string(flags) + ")");
  }
  AIRLOCK_ASSIGN_OR_RETURN(uint64_t min, r.U(32));
  uint64_t max = max_pages;
  if (flags == 1) {
    AIRLOCK_ASSIGN_OR_RETURN(uint64_t declared, r.U(32));
    max = std::min(declared, max_pages);
  }
  if (min > max_pages) {
    return InvalidArgument("wasm: the module needs " + std::to_string(min * kWasmPageBytes >> 20) +
                           " MiB of memory at start, over the limit of " +
                           std::to_string(max_pages * kWasmPageBytes >> 20) + " MiB");
  }
  if (max < min) return InvalidArgument("wasm: memory maximum below its minimum");
  out.push_back(1);
  PutU(out, min);
  PutU(out, max);
  return OkStatus();
}

StatusOr<std::string> RewriteImports(std::string_view body, uint64_t max_pages) {
  Reader r(body);
  std::string out;
  AIRLOCK_ASSIGN_OR_RETURN(uint64_t count, r.U(32));
  PutU(out, count);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t start = r.pos();
    for (int name = 0; name < 2; ++name) {  // module, field
      AIRLOCK_ASSIGN_OR_RETURN(uint64_t len, r.U(32));
      AIRLOCK_RETURN_IF_ERROR(r.Bytes(len).status());
    }
    AIRLOCK_ASSIGN_OR_RETURN(uint8_t kind, r.Byte());
    out.append(body.substr(start, r.pos() - start));
    switch (kind) {
      case 0x00: {  // func: type index
        const size_t s = r.pos();
        AIRLOCK_RETURN_IF_ERROR(r.U(32).status());
        out.append(body.substr(s, r.pos() - s));
        break;
      }
      case 0x01: {  // table: reftype + limits
        const size_t s = r.pos();
        AIRLOCK_RETURN_IF_ERROR(r.Byte().status());
        AIRLOCK_ASSIGN_OR_RETURN(uint8_t flags, r.Byte());
        AIRLOCK_RETURN_IF_ERROR(r.U(32).status());
        if (flags & 1) AIRLOCK_RETURN_IF_ERROR(r.U(32).status());
        out.append(body.substr(s, r.pos() - s));
        break;
      }
      case 0x02:  // memory
        AIRLOCK_RETURN_IF_ERROR(CapLimits(r, out, max_pages));
        break;
      case 0x03: {  // global: valtype + mutability
        const size_t s = r.pos();
        AIRLOCK_RETURN_IF_ERROR(r.Byte().status());
        AIRLOCK_RETURN_IF_ERROR(r.Byte().status());
        out.append(body.substr(s, r.pos() - s));
        break;
      }
      case 0x04: {  // tag (exceptions): attribute + type index
        const size_t s = r.pos();
        AIRLOCK_RETURN_IF_ERROR(r.Byte().status());
        AIRLOCK_RETURN_IF_ERROR(r.U(32).status());
        out.append(body.substr(s, r.pos() - s));
        break;
      }
      default:
        return InvalidArgument("wasm: unknown import kind " + std::to_string(kind));
    }
  }
  if (!r.done()) return InvalidArgument("wasm: trailing bytes in the import section");
  return out;
}

StatusOr<std::string> RewriteMemories(std::string_view body, uint64_t max_pages) {
  Reader r(body);
  std::string out;
  AIRLOCK_ASSIGN_OR_RETURN(uint64_t count, r.U(32));
  PutU(out, count);
  for (uint64_t i = 0; i < count; ++i) AIRLOCK_RETURN_IF_ERROR(CapLimits(r, out, max_pages));
  if (!r.done()) return InvalidArgument("wasm: trailing bytes in the memory section");
  return out;
}

}  // namespace

StatusOr<std::string> CapMemory(std::string_view module, uint64_t max_bytes) {
  static constexpr char kHeader[] = {'\0', 'a', 's', 'm', 1, 0, 0, 0};
  if (module.size() < sizeof kHeader || module.substr(0, sizeof kHeader) != std::string_view(kHeader, sizeof kHeader)) {
    return InvalidArgument("wasm: not a WebAssembly 1.0 binary module");
  }
  const uint64_t max_pages = std::max<uint64_t>(1, std::min<uint64_t>(max_bytes / kWasmPageBytes, 65536));
  Reader r(module.substr(sizeof kHeader));
  std::string out(kHeader, sizeof kHeader);
  out.reserve(module.size() + 64);  // one allocation: modules are tens of MB
  while (!r.done()) {
    AIRLOCK_ASSIGN_OR_RETURN(uint8_t id, r.Byte());
    AIRLOCK_ASSIGN_OR_RETURN(uint64_t size, r.U(32));
    AIRLOCK_ASSIGN_OR_RETURN(std::string_view body, r.Bytes(size));
    if (id == 2 || id == 5) {
      AIRLOCK_ASSIGN_OR_RETURN(std::string rewritten,
                               id == 2 ? RewriteImports(body, max_pages) : RewriteMemories(body, max_pages));
      out.push_back(static_cast<char>(id));
      PutU(out, rewritten.size());
      out += rewritten;
    } else {
      out.push_back(static_cast<char>(id));
      PutU(out, size);
      out.append(body);
    }
  }
  return out;
}

}  // namespace airlock::wasm
