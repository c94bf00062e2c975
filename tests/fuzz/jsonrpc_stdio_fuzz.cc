// The MCP protocol engine through its stdio transport: arbitrary bytes as a
// client's input stream (framing, JSON-RPC validation, lifecycle, every
// method and tool's argument checks), with a fake executor that answers runs
// at once. Each input is one whole connection: ServeStdio must return, and
// every response line it writes must be one JSON object.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

#include "config/config.h"
#include "fuzz_support.h"
#include "mcp/server.h"
#include "mcp/stdio_transport.h"

namespace {

using namespace airlock;

struct Fixture {
  Fixture() : config(*config::ParseConfig(R"({"server": {"max_message_bytes": 65536}})")), server(config, executor) {}
  config::Config config;
  fuzz::InstantExecutor executor;
  mcp::McpServer server;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();
  int in = memfd_create("fuzz-in", MFD_CLOEXEC);
  int out = memfd_create("fuzz-out", MFD_CLOEXEC);
  if (in < 0 || out < 0) abort();
  if (size > 0 && write(in, data, size) != static_cast<ssize_t>(size)) abort();
  lseek(in, 0, SEEK_SET);
  mcp::ServeStdio(fixture->server, in, out);
  // Every line written is one JSON-RPC object.
  off_t n = lseek(out, 0, SEEK_END);
  std::string written(static_cast<size_t>(n), '\0');
  if (n > 0 && pread(out, written.data(), written.size(), 0) != n) abort();
  size_t start = 0;
  while (start < written.size()) {
    size_t end = written.find('\n', start);
    if (end == std::string::npos) abort();  // a response without its newline
    auto j = nlohmann::json::parse(written.begin() + start, written.begin() + end, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("jsonrpc", "") != "2.0") abort();
    start = end + 1;
  }
  close(in);
  close(out);
  return 0;
}
