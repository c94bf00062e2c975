// gateway::ValidateJsonSchema with both the schema (a downstream server's
// inputSchema) and the instance (arguments from untrusted code) fuzzed:
// never a crash, never unbounded recursion or work. The input is the schema's
// JSON text, a 0xFF byte, then the instance's.
#include "fuzz_support.h"
#include "gateway/schema_validator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  airlock::fuzz::FuzzInput in(data, size);
  std::string schema_text = in.Until("\xff");
  std::string instance_text = in.Rest();
  nlohmann::json schema = nlohmann::json::parse(schema_text, nullptr, false);
  nlohmann::json instance = nlohmann::json::parse(instance_text, nullptr, false);
  if (schema.is_discarded() || instance.is_discarded()) return 0;
  (void)airlock::gateway::ValidateJsonSchema(schema, instance);
  return 0;
}
