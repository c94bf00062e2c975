// Parsing of the "mcpServers" section (src/gateway/connector_config.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gateway/connector_config.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;

StatusOr<std::vector<ConnectorConfig>> Parse(const char* text) { return ParseMcpServers(json::parse(text)); }

TEST(GatewayConfig, ParsesStdioAndHttpWithAirlockKeys) {
  auto r = Parse(R"({
    "crm": {"command": "npx", "args": ["-y", "crm"], "env": {"TOKEN": "s3cret"}, "cwd": "/tmp",
            "trusted": true, "read_only_tools": ["get", "list"], "timeout_ms": 5000, "stderr": "discard"},
    "docs": {"url": "https://u:p@docs.example.com:8443/mcp?key=abc", "headers": {"Authorization": "Bearer t"},
             "enabled": false, "type": "http"}
  })");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  const ConnectorConfig& crm = (*r)[0];
  EXPECT_EQ(crm.name, "crm");
  EXPECT_EQ(crm.transport, TransportKind::kStdio);
  EXPECT_EQ(crm.command, "npx");
  EXPECT_EQ(crm.args, (std::vector<std::string>{"-y", "crm"}));
  EXPECT_EQ(crm.env.at("TOKEN"), "s3cret");
  EXPECT_EQ(crm.cwd, "/tmp");
  EXPECT_TRUE(crm.trusted);
  EXPECT_EQ(crm.read_only_tools, (std::set<std::string>{"get", "list"}));
  EXPECT_EQ(crm.timeout_ms, 5000u);
  EXPECT_EQ(crm.stderr_mode, StderrMode::kDiscard);
  EXPECT_TRUE(crm.enabled);
  const ConnectorConfig& docs = (*r)[1];
  EXPECT_EQ(docs.transport, TransportKind::kHttp);
  EXPECT_EQ(docs.headers.at("Authorization"), "Bearer t");
  EXPECT_FALSE(docs.enabled);
  EXPECT_FALSE(docs.trusted);
  EXPECT_EQ(docs.timeout_ms, kDefaultCallTimeoutMs);
  // Log-safe targets carry neither args, path, query nor userinfo.
  EXPECT_EQ(RedactedTarget(crm), "stdio: npx");
  EXPECT_EQ(RedactedTarget(docs), "http: https://docs.example.com:8443");
}

TEST(GatewayConfig, NullMeansNoConnectors) {
  auto r = ParseMcpServers(json());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST(GatewayConfig, ErrorsNameThePath) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {R"({"crm": {"command": "x", "args": ["a", 2]}})", "mcpServers.crm.args[1]: expected a string"},
      {R"({"crm": {"command": 3}})", "mcpServers.crm.command: expected a string"},
      {R"({"crm": {"command": "x", "env": {"A": 1}}})", "mcpServers.crm.env.A: expected a string"},
      {R"({"crm": {"command": "x", "trusted": "yes"}})", "mcpServers.crm.trusted: expected true or false"},
      {R"({"crm": {"command": "x", "read_only_tool": []}})", "mcpServers.crm: unknown key \"read_only_tool\""},
      {R"({"crm": {"command": "x", "read_only_tools": [1]}})", "mcpServers.crm.read_only_tools[0]: expected a string"},
      {R"({"crm": {"command": "x", "timeout_ms": 0}})", "mcpServers.crm.timeout_ms: expected an integer"},
      {R"({"crm": {"command": "x", "url": "http://a"}})", "exactly one of"},
      {R"({"crm": {}})", "exactly one of"},
      {R"({"crm": {"url": "ftp://a"}})", "mcpServers.crm.url: expected an http:// or https:// URL"},
      {R"({"crm": {"url": "http://a", "env": {}}})", "mcpServers.crm.env: not allowed for a HTTP connector"},
      {R"({"crm": {"command": "x", "headers": {}}})", "mcpServers.crm.headers: not allowed for a stdio connector"},
      {R"({"crm": {"command": "x", "type": "http"}})", "mcpServers.crm.type"},
      {R"({"crm": {"command": "x", "stderr": "file"}})", "mcpServers.crm.stderr"},
      {R"({"a.b": {"command": "x"}})", "mcpServers.a.b: connector names must match"},
      {R"({"": {"command": "x"}})", "connector names must match"},
      {R"({"abcdefghijabcdefghijabcdefghijabc": {"command": "x"}})", "connector names must match"},
      {R"([])", "mcpServers: expected an object"},
      {R"({"crm": []})", "mcpServers.crm: expected an object"},
  };
  for (const Case& c : cases) {
    auto r = Parse(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.error), std::string::npos) << r.status().message();
  }
}

TEST(GatewayConfig, SecretValuesNeverAppearInErrors) {
  auto r = Parse(R"({"crm": {"url": "http://a", "headers": {"Authorization": "Bearer hunter2\n"}}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos);
  EXPECT_NE(r.status().message().find("headers.Authorization"), std::string::npos);
}

TEST(GatewayConfig, ConnectorNames) {
  EXPECT_TRUE(IsValidConnectorName("crm"));
  EXPECT_TRUE(IsValidConnectorName("A-b_9"));
  EXPECT_TRUE(IsValidConnectorName(std::string(32, 'x')));
  EXPECT_FALSE(IsValidConnectorName(std::string(33, 'x')));
  EXPECT_FALSE(IsValidConnectorName("a.b"));
  EXPECT_FALSE(IsValidConnectorName("a b"));
  EXPECT_FALSE(IsValidConnectorName("é"));
  EXPECT_FALSE(IsValidConnectorName(""));
}

}  // namespace
}  // namespace airlock::gateway
