// An in-memory downstream MCP server behind gateway::ClientTransport, for
// fuzzing the gateway and the code-mode bridge without processes:
//
//   gateway::GatewayOptions options;
//   options.connector.transport_factory = FakeDownstream::Factory();
//   auto gw = gateway::Gateway::Create({{"fake", {{"command", "fake"}}}}, options);
//
// It offers two tools, fake.read_item (readOnlyHint, an input schema) and
// fake.write_item (a write tool), and answers every tools/call by echoing
// its arguments as structuredContent; "nest": N in the arguments returns a
// value nested N deep, to test what the gateway does with hostile results.
// Replies come from the transport's own thread, as a real one's do.
#ifndef AIRLOCK_TESTS_FUZZ_FAKE_DOWNSTREAM_H_
#define AIRLOCK_TESTS_FUZZ_FAKE_DOWNSTREAM_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "gateway/client_transport.h"
#include "gateway/connector_config.h"

namespace airlock::fuzz {

class FakeDownstream : public gateway::ClientTransport {
 public:
  static std::function<std::unique_ptr<gateway::ClientTransport>(const gateway::ConnectorConfig&)> Factory() {
    return [](const gateway::ConnectorConfig&) { return std::make_unique<FakeDownstream>(); };
  }

  ~FakeDownstream() override { Close(); }

  Status Start(gateway::TransportCallbacks callbacks) override {
    callbacks_ = std::move(callbacks);
    thread_ = std::thread([this] { Loop(); });
    return OkStatus();
  }

  Status Send(const nlohmann::json& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Unavailable("closed");
    queue_.push_back(message);
    cv_.notify_all();
    return OkStatus();
  }

  void Close() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_ && !thread_.joinable()) return;
      closed_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  static nlohmann::json Answer(const nlohmann::json& m) {
    const std::string method = m.value("method", "");
    if (method == "initialize") {
      return {{"protocolVersion", "2025-06-18"},
              {"capabilities", {{"tools", nlohmann::json::object()}}},
              {"serverInfo", {{"name", "fake"}, {"version", "1"}}}};
    }
    if (method == "tools/list") {
      nlohmann::json schema = {{"type", "object"},
                               {"properties", {{"id", {{"type", "integer"}, {"minimum", 0}}},
                                               {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
                               {"required", {"id"}}};
      return {{"tools",
               {{{"name", "read_item"}, {"description", "reads an item"}, {"inputSchema", schema},
                 {"annotations", {{"readOnlyHint", true}}}},
                {{"name", "write_item"}, {"description", "writes an item"},
                 {"inputSchema", {{"type", "object"}}}}}}};
    }
    if (method == "tools/call") {
      nlohmann::json args = m["params"].value("arguments", nlohmann::json::object());
      nlohmann::json value = args;
      if (args.is_object() && args.contains("nest") && args["nest"].is_number_unsigned()) {
        uint64_t depth = std::min<uint64_t>(args["nest"].get<uint64_t>(), 100000);
        value = nlohmann::json::array();
        for (uint64_t i = 0; i < depth; ++i) value = nlohmann::json::array({std::move(value)});
        value = {{"nested", std::move(value)}};
      }
      return {{"content", {{{"type", "text"}, {"text", "ok"}}}}, {"structuredContent", value}};
    }
    return nullptr;
  }

  void Loop() {
    for (;;) {
      nlohmann::json m;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
        if (closed_) return;
        m = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!m.contains("id") || !m.contains("method")) continue;  // notifications, responses
      nlohmann::json result = Answer(m);
      nlohmann::json reply = {{"jsonrpc", "2.0"}, {"id", m["id"]}};
      if (result.is_null()) {
        reply["error"] = {{"code", -32601}, {"message", "method not found"}};
      } else {
        reply["result"] = std::move(result);
      }
      if (callbacks_.on_message) callbacks_.on_message(std::move(reply));
    }
  }

  gateway::TransportCallbacks callbacks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<nlohmann::json> queue_;
  bool closed_ = false;
  std::thread thread_;
};

}  // namespace airlock::fuzz

#endif  // AIRLOCK_TESTS_FUZZ_FAKE_DOWNSTREAM_H_
