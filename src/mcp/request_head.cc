#include "mcp/request_head.h"

#include <charconv>
#include <strings.h>

namespace airlock::mcp {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool NameIs(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::optional<std::string> RequestHead::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (NameIs(n, name)) return v;
  }
  return std::nullopt;
}

std::optional<RequestHead> ParseRequestHead(std::string_view text) {
  RequestHead head;
  size_t eol = text.find('\n');
  if (eol == std::string_view::npos) return std::nullopt;
  const std::string_view line = Trim(text.substr(0, eol));
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos || sp2 == sp1 + 1) return std::nullopt;
  head.method = std::string(line.substr(0, sp1));
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  head.path = std::string(target.substr(0, target.find('?')));
  size_t start = eol + 1;
  while (start < text.size()) {
    eol = text.find('\n', start);
    const std::string_view field = text.substr(start, (eol == std::string_view::npos ? text.size() : eol) - start);
    start = eol == std::string_view::npos ? text.size() : eol + 1;
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos) continue;  // the blank line, or junk httplib will refuse
    head.headers.emplace_back(std::string(Trim(field.substr(0, colon))), std::string(Trim(field.substr(colon + 1))));
  }
  return head;
}

BodyFraming FramingOf(const RequestHead& head) {
  bool has_length = false, chunked = false;
  uint64_t length = 0;
  for (const auto& [name, value] : head.headers) {
    if (NameIs(name, "Transfer-Encoding")) {
      chunked = true;
    } else if (NameIs(name, "Content-Length")) {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return {BodyFraming::kInvalid};
      if (has_length && n != length) return {BodyFraming::kInvalid};
      has_length = true;
      length = n;
    }
  }
  if (chunked && has_length) return {BodyFraming::kInvalid};
  if (chunked) return {BodyFraming::kChunked};
  if (has_length && length > 0) return {BodyFraming::kLength, length};
  return {BodyFraming::kNone};
}

}  // namespace airlock::mcp
