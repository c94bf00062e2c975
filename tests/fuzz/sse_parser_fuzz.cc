// gateway::SseParser on arbitrary bytes, fed in fuzzer-chosen pieces (a
// downstream HTTP MCP server's event stream is untrusted).
#include <algorithm>

#include "fuzz_support.h"
#include "gateway/sse_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  airlock::fuzz::FuzzInput in(data, size);
  size_t chunk = 1 + in.Byte() % 64;
  std::string body = in.Rest();
  size_t events = 0;
  airlock::gateway::SseParser parser([&](const airlock::gateway::SseEvent& e) { ++events; });
  for (size_t at = 0; at < body.size(); at += chunk) {
    if (!parser.Feed(std::string_view(body).substr(at, std::min(chunk, body.size() - at)))) break;
  }
  return 0;
}
