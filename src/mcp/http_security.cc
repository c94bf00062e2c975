#include "mcp/http_security.h"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "base/encoding.h"

namespace airlock::mcp {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "host:port" / "[v6]:port" / "host" → host (brackets kept for v6).
std::string_view HostPart(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    return close == std::string_view::npos ? authority : authority.substr(0, close + 1);
  }
  size_t colon = authority.find(':');
  return colon == std::string_view::npos ? authority : authority.substr(0, colon);
}

}  // namespace

bool IsLoopbackName(std::string_view host) {
  std::string h = Lower(host);
  return h == "localhost" || h == "::1" || h == "[::1]" || h.rfind("127.", 0) == 0;
}

bool OriginAllowed(std::string_view origin, const std::vector<std::string>& allowed) {
  std::string o = Lower(Trim(origin));
  while (!o.empty() && o.back() == '/') o.pop_back();
  for (const std::string& a : allowed) {
    std::string x = Lower(a);
    while (!x.empty() && x.back() == '/') x.pop_back();
    if (!x.empty() && x == o) return true;
  }
  size_t sep = o.find("://");
  if (sep == std::string::npos) return false;
  std::string scheme = o.substr(0, sep);
  if (scheme != "http" && scheme != "https") return false;
  std::string_view authority = std::string_view(o).substr(sep + 3);
  if (authority.find('/') != std::string_view::npos || authority.find('@') != std::string_view::npos) return false;
  return IsLoopbackName(HostPart(authority));
}

bool HostAllowed(std::string_view host_header, bool bound_to_loopback, const std::vector<std::string>& allowed) {
  std::string host = Lower(HostPart(Trim(host_header)));
  if (IsLoopbackName(host)) return true;
  for (const std::string& a : allowed) {
    if (Lower(a) == host) return true;
  }
  return allowed.empty() && !bound_to_loopback;
}

bool AcceptsType(std::string_view accept, std::string_view type) {
  std::string major = std::string(type.substr(0, type.find('/'))) + "/*";
  size_t start = 0;
  while (start <= accept.size()) {
    size_t comma = accept.find(',', start);
    if (comma == std::string_view::npos) comma = accept.size();
    std::string_view item = accept.substr(start, comma - start);
    item = Trim(item.substr(0, item.find(';')));
    std::string t = Lower(item);
    if (t == type || t == "*/*" || t == major) return true;
    start = comma + 1;
  }
  return false;
}

std::string_view BearerToken(std::string_view authorization) {
  authorization = Trim(authorization);
  if (authorization.size() < 7 || Lower(authorization.substr(0, 7)) != "bearer ") return {};
  return Trim(authorization.substr(7));
}

bool MetricsRequestAllowed(std::string_view remote_addr, std::string_view authorization, std::string_view token) {
  return IsLoopbackName(remote_addr) || (!token.empty() && BearerMatches(authorization, token));
}

bool BearerMatches(std::string_view authorization, std::string_view token) {
  authorization = Trim(authorization);
  if (authorization.size() < 7 || Lower(authorization.substr(0, 7)) != "bearer ") return false;
  std::string_view given = Trim(authorization.substr(7));
  // Compare over the expected token's length regardless of where they differ.
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) {
    unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(token[i]);
  }
  return diff == 0 && !token.empty();
}

std::string RandomSessionId() {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  std::string out;
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

std::string AnonymousUser(const std::string& mcp_session_id) {
  return "anonymous:" + Sha256Hex(mcp_session_id).substr(0, 16);
}

}  // namespace airlock::mcp
