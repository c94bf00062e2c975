#include "base/terminal_text.h"

#include <cstdint>

namespace airlock {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendByte(std::string& out, unsigned char b) {
  out += "\\x";
  out.push_back(kHex[b >> 4]);
  out.push_back(kHex[b & 15]);
}

void AppendCodePoint(std::string& out, uint32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(cp >> shift) & 15]);
}

bool IsBidiControl(uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
         cp == 0x061C;
}

// The length of the well-formed UTF-8 sequence at `s[i]` (a lead byte >= 0x80)
// and its code point; 0 when it is ill-formed (RFC 3629: no overlongs,
// surrogates or code points above U+10FFFF).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = b(0);
  size_t len = 0;
  uint32_t min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2, min = 0x80, *cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3, min = 0x800, *cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4, min = 0x10000, *cp = lead & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (b(k) & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string TerminalText(std::string_view text, TextShape shape) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      const bool kept = shape == TextShape::kBlock && (c == '\n' || c == '\t');
      if ((c < 0x20 && !kept) || c == 0x7F) {
        AppendByte(out, c);
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      AppendByte(out, c);
      ++i;
    } else if ((cp >= 0x80 && cp <= 0x9F) || IsBidiControl(cp)) {
      AppendCodePoint(out, cp);
      i += len;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace airlock
