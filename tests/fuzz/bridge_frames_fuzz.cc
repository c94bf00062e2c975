// codemode::BridgeSession fed arbitrary frames (one per line) from a
// "program", with a gateway whose one connector is an in-memory fake
// downstream server (fake_downstream.h). Grants allow the fake connector's
// read tools only. Every reply must be a JSON object with the request's id;
// the session must close cleanly whatever was sent.
#include <cstdlib>
#include <memory>
#include <mutex>

#include "codemode/bridge_session.h"
#include "fake_downstream.h"
#include "fuzz_support.h"
#include "gateway/gateway.h"

namespace {

using nlohmann::json;
using namespace airlock;

gateway::Gateway& SharedGateway() {
  static gateway::Gateway* gw = [] {
    gateway::GatewayOptions options;
    options.connector.transport_factory = fuzz::FakeDownstream::Factory();
    options.log = [](const std::string&) {};
    auto made = gateway::Gateway::Create(json{{"fake", {{"command", "fake"}}}}, options);
    if (!made.ok()) abort();
    gateway::Gateway* g = made->release();
    g->ConnectAll(std::chrono::seconds(5));
    return g;
  }();
  return *gw;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gateway::Gateway& gw = SharedGateway();
  codemode::Limits limits;
  limits.max_calls = 32;
  limits.max_concurrent = 4;
  limits.max_args_bytes = 4096;
  limits.max_result_bytes = 64 << 10;
  codemode::Grants grants;
  grants.connectors = {"fake"};
  auto session = std::make_unique<codemode::BridgeSession>(
      gw, grants, limits, std::chrono::steady_clock::now() + std::chrono::seconds(2));
  std::mutex mu;
  size_t replies = 0;
  auto reply = [&](std::string frame) {
    json j = json::parse(frame, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("id")) abort();
    std::lock_guard<std::mutex> lock(mu);
    ++replies;
  };
  fuzz::FuzzInput in(data, size);
  for (int frames = 0; frames < 64 && !in.empty(); ++frames) session->OnFrame(in.Until("\n"), reply);
  session->Close();
  (void)session->return_value();
  (void)session->return_error();
  (void)session->calls();
  return 0;
}
