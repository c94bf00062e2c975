// codetools::ValidateProposal and HashOf on proposals built from arbitrary
// JSON (propose_code_tool's arguments come from an agent): never a crash,
// and the hash is canonical — the same proposal after a JSON round trip (or
// with its object keys in another order) has the same hash.
#include <cstdlib>

#include "codetools/code_tool_store.h"
#include "fuzz_support.h"

namespace {

using nlohmann::json;
using airlock::codetools::Proposal;

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

Proposal FromJson(const json& j) {
  Proposal p;
  p.name = Str(j, "name");
  p.description = Str(j, "description");
  p.language = Str(j, "language");
  p.code = Str(j, "code");
  if (j.contains("input_schema")) p.input_schema = j["input_schema"];
  p.connectors = Strings(j, "connectors");
  p.tools = Strings(j, "tools");
  if (j.contains("limits")) p.limits = j["limits"];
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json j = json::parse(data, data + size, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return 0;
  Proposal p = FromJson(j);
  (void)airlock::codetools::ValidateProposal(p);
  std::string hash = airlock::codetools::HashOf(p);
  if (hash.empty()) return 0;  // not valid UTF-8 somewhere: matches nothing
  // Round trip through text: the same hash.
  json again = json::parse(j.dump(), nullptr, false);
  if (again.is_discarded()) abort();
  if (airlock::codetools::HashOf(FromJson(again)) != hash) abort();
  return 0;
}
