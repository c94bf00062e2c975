// config::ParseConfig on arbitrary text (an operator's file, or one written
// by a tool): never a crash; a config it accepts resolves its derived values
// without crashing either.
#include "config/config.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto config = airlock::config::ParseConfig(text);
  if (!config.ok()) return 0;
  (void)config->ResolvedMaxConcurrentRuns();
  (void)config->ResolvedMaxSessions();
  (void)config->ResolvedStateDir();
  std::string host;
  int port = 0;
  (void)airlock::config::ParseListenAddress(config->server.http.listen, &host, &port);
  return 0;
}
