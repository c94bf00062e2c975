// The parts of an HTTP/1.1 request header the connection lobby needs before
// a worker sees the request: method, path and header fields, and how the
// body that follows is framed (Content-Length, chunked, or none).
//
//   std::optional<RequestHead> head = ParseRequestHead(header_text);
//   BodyFraming body = FramingOf(*head);   // kLength: body.length bytes follow
//
// Only what is needed to find the body's end is parsed; httplib parses the
// request again, fully, on the worker.
#ifndef AIRLOCK_MCP_REQUEST_HEAD_H_
#define AIRLOCK_MCP_REQUEST_HEAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace airlock::mcp {

struct RequestHead {
  std::string method;
  std::string path;  // the request target without its query
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, values trimmed

  // The first field named `name` (case-insensitive), or nullopt.
  std::optional<std::string> Header(std::string_view name) const;
};

// `text`: the header through its blank line (RequestHeaderLength). Nullopt
// when the request line is malformed.
std::optional<RequestHead> ParseRequestHead(std::string_view text);

struct BodyFraming {
  enum Kind { kNone, kLength, kChunked, kInvalid } kind = kNone;
  uint64_t length = 0;  // kLength
};

// kInvalid: a Content-Length that is not a number, or two that differ, or
// both Content-Length and Transfer-Encoding (request smuggling).
BodyFraming FramingOf(const RequestHead& head);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_REQUEST_HEAD_H_
