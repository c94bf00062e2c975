// Isolation tier selection through MCP: the config's default tier
// (languages.default_isolation) and an endpoint confined to the WASM tier
// ("isolation": ["wasm"]), driven through Session with a fake executor that
// records what it was asked to run.
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "config/config.h"
#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp_test_util.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::InitializeRequest;
using testing::RecordingChannel;
using testing::RunCode;

config::Config ConfigFrom(const json& j) {
  StatusOr<config::Config> c = config::ConfigFromJson(j);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : config::DefaultConfig();
}

// python has both tiers, c only native, javascript only wasm.
void GiveTiers(FakeExecutor& executor) {
  for (runtimes::LanguageInfo& l : executor.languages) {
    l.tiers = l.name == "python" ? std::vector<std::string>{"native", "wasm"} : std::vector<std::string>{"native"};
  }
  runtimes::LanguageInfo js;
  js.name = "javascript";
  js.display_name = "JavaScript";
  js.tiers = {"wasm"};
  executor.languages.push_back(js);
}

class IsolationTest : public ::testing::Test {
 protected:
  void Serve(const json& config_json, std::string endpoint = "") {
    GiveTiers(executor_);
    server_.emplace(ConfigFrom(config_json), executor_, nullptr, ServerOptions{.endpoint = std::move(endpoint)});
    session_ = server_->NewSession(std::make_shared<RecordingChannel>());
    Send(InitializeRequest(1, "2025-11-25"));
    Send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  }
  void TearDown() override {
    if (session_) session_->Close();
  }
  json Send(const json& msg) {
    auto ch = std::make_shared<RecordingChannel>();
    session_->HandleText(msg.dump(), ch);
    return ch->Wait();
  }
  json RunTool(json args) { return Send(RunCode(next_id_++, std::move(args))); }
  json RunCodeDefinition() {
    json r = Send({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}});
    for (const json& t : r["result"]["tools"]) {
      if (t["name"] == "run_code") return t;
    }
    return nullptr;
  }
  std::vector<std::string> LanguageNames() {
    json r = Send({{"jsonrpc", "2.0"}, {"id", 4}, {"method", "tools/call"},
                   {"params", {{"name", "list_languages"}, {"arguments", json::object()}}}});
    std::vector<std::string> names;
    for (const json& l : r["result"]["structuredContent"]["languages"]) names.push_back(l["name"]);
    return names;
  }

  FakeExecutor executor_;
  std::optional<McpServer> server_;
  std::shared_ptr<Session> session_;
  int next_id_ = 10;
};

TEST_F(IsolationTest, WithoutConfigARunThatNamesNoTierIsNativeWhereTheLanguageHasIt) {
  Serve(json::object());
  json r = RunTool({{"language", "python"}, {"code", "x"}});
  EXPECT_FALSE(r["result"].value("isError", true)) << r;
  r = RunTool({{"language", "javascript"}, {"code", "x"}});  // wasm is its only tier
  EXPECT_FALSE(r["result"].value("isError", true)) << r;
  ASSERT_EQ(executor_.requests.size(), 2u);
  EXPECT_EQ(executor_.requests[0].isolation, "native");
  EXPECT_EQ(executor_.requests[1].isolation, "wasm");
  EXPECT_EQ(RunCodeDefinition()["inputSchema"]["properties"]["isolation"]["enum"], json({"native", "wasm"}));
}

TEST_F(IsolationTest, TheConfiguredDefaultTierIsUsedWhenTheLanguageHasIt) {
  Serve({{"languages", {{"default_isolation", "wasm"}}}});
  RunTool({{"language", "python"}, {"code", "x"}});
  RunTool({{"language", "c"}, {"code", "x"}});  // no wasm tier: its own
  RunTool({{"language", "python"}, {"code", "x"}, {"isolation", "native"}});
  ASSERT_EQ(executor_.requests.size(), 3u);
  EXPECT_EQ(executor_.requests[0].isolation, "wasm");
  EXPECT_EQ(executor_.requests[1].isolation, "native");
  EXPECT_EQ(executor_.requests[2].isolation, "native");
  EXPECT_EQ(RunCodeDefinition()["inputSchema"]["properties"]["isolation"]["default"], "wasm");
}

TEST_F(IsolationTest, AnEndpointConfinedToWasmRefusesNativeAndOffersOnlyWasmLanguages) {
  Serve({{"endpoints", {{"sealed", {{"path", "/sealed"}, {"isolation", {"wasm"}}}}}}}, "sealed");
  EXPECT_EQ(LanguageNames(), (std::vector<std::string>{"javascript", "python"}));  // c has no wasm tier
  json def = RunCodeDefinition();
  EXPECT_EQ(def["inputSchema"]["properties"]["isolation"]["enum"], json({"wasm"}));
  EXPECT_EQ(def["inputSchema"]["properties"]["isolation"]["default"], "wasm");

  RunTool({{"language", "python"}, {"code", "x"}});
  ASSERT_EQ(executor_.requests.size(), 1u);
  EXPECT_EQ(executor_.requests[0].isolation, "wasm");  // the default follows the endpoint

  json r = RunTool({{"language", "python"}, {"code", "x"}, {"isolation", "native"}});
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_EQ(r["result"]["content"][0]["text"], "isolation \"native\" is not allowed on this endpoint; allowed: wasm");
  r = RunTool({{"language", "c"}, {"code", "x"}});
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_EQ(r["result"]["structuredContent"]["error_code"], "unknown_language");
  EXPECT_EQ(executor_.requests.size(), 1u);  // nothing refused reached the executor
}

TEST(IsolationConfigTest, BadTierValuesAreConfigErrorsNamingTheKey) {
  StatusOr<config::Config> c = config::ConfigFromJson({{"languages", {{"default_isolation", "vm"}}}});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "config.languages.default_isolation: expected \"native\" or \"wasm\"");
  StatusOr<governance::Policy> p =
      governance::Policy::FromJson(nullptr, {{"e", {{"isolation", {"native", "gvisor"}}}}}, nullptr);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "endpoints.e.isolation: \"gvisor\" is not a tier (\"native\" or \"wasm\")");
  p = governance::Policy::FromJson(nullptr, {{"e", {{"isolation", json::array()}}}}, nullptr);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "endpoints.e.isolation: name at least one tier");
  // Round trip keeps the default tier.
  c = config::ConfigFromJson({{"languages", {{"default_isolation", "wasm"}}}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(config::ConfigToJson(*c)["languages"]["default_isolation"], "wasm");
}

}  // namespace
}  // namespace airlock::mcp
