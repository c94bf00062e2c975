// Code-mode connectors against a downstream server that speaks only the
// modern era of MCP (2026-07-28): tests/fixtures/mcp-servers/modern-server.mjs,
// built on the official SDK v2 server package with legacy requests refused,
// over stdio and Streamable HTTP. The legacy servers of
// gateway_servers_test.cc cover the fallback: every connector there probes
// with server/discover first and falls back to initialize.
#include <chrono>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gateway/gateway.h"
#include "gateway/modern_headers.h"
#include "mcp_fixture_servers.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

using tests::kMcpFixtures;

bool FixturesInstalled() { return tests::McpFixturesInstalled("@modelcontextprotocol/server"); }

#define REQUIRE_FIXTURES()                                                                           \
  if (!FixturesInstalled()) GTEST_SKIP() << "run scripts/setup.sh (npm install in " << kMcpFixtures \
                                         << ") and install node"

GatewayOptions QuietOptions() {
  GatewayOptions options;
  options.log = [](const std::string&) {};
  return options;
}

ConnectorConfig ModernStdio(ProtocolEra era = ProtocolEra::kAuto) {
  ConnectorConfig c;
  c.name = "modern";
  c.command = "node";
  c.args = {kMcpFixtures + "/modern-server.mjs"};
  c.stderr_mode = StderrMode::kDiscard;
  c.timeout_ms = 20000;
  c.protocol = era;
  c.trusted = true;  // its readOnlyHint annotations count
  return c;
}

ConnectorConfig LegacyStdio(ProtocolEra era) {
  ConnectorConfig c;
  c.name = "legacy";
  c.command = "node";
  c.args = {kMcpFixtures + "/test-server.mjs"};
  c.stderr_mode = StderrMode::kDiscard;
  c.timeout_ms = 20000;
  c.protocol = era;
  return c;
}

// Lists and calls through `gw`, whose one connector is named `name`; the echo
// tool reports the protocol version its request carried.
void ExpectModernCalls(Gateway& gw, const std::string& name) {
  auto connected = gw.ConnectAll(milliseconds(30000));
  ASSERT_TRUE(connected[name].ok()) << connected[name].ToString();
  std::vector<ToolEntry> tools = gw.ListTools();
  bool echo_listed = false;
  for (const ToolEntry& t : tools) {
    if (t.name == name + ".echo") {
      echo_listed = true;
      EXPECT_TRUE(t.read_only);
    }
  }
  EXPECT_TRUE(echo_listed);
  CallOutcome echo = gw.CallTool(name + ".echo", {{"text", "über modern"}}, nullptr);
  ASSERT_TRUE(echo.ok) << echo.error_message;
  EXPECT_EQ(echo.value.value("text", ""), "über modern") << echo.value.dump();
  EXPECT_EQ(echo.value.value("protocolVersion", ""), "2026-07-28") << echo.value.dump();
  CallOutcome add = gw.CallTool(name + ".add", {{"a", 2}, {"b", 40}}, nullptr);
  ASSERT_TRUE(add.ok) << add.error_message;
  EXPECT_EQ(add.value, json(42)) << add.value.dump();
  // A schema violation is the server's error, reported as such.
  CallOutcome bad = gw.CallTool(name + ".add", {{"a", "two"}}, nullptr);
  EXPECT_FALSE(bad.ok);
}

TEST(GatewayModern, StdioServerThatRefusesLegacyIsSpokenToInTheModernEra) {
  REQUIRE_FIXTURES();
  Gateway gw({ModernStdio()}, QuietOptions());
  ExpectModernCalls(gw, "modern");
}

TEST(GatewayModern, HttpServerThatRefusesLegacyIsSpokenToInTheModernEra) {
  REQUIRE_FIXTURES();
  tests::FixtureHttpServer server("modern-server.mjs");
  ASSERT_GT(server.port(), 0);
  ConnectorConfig c;
  c.name = "web";
  c.transport = TransportKind::kHttp;
  c.url = server.url();
  c.timeout_ms = 20000;
  c.trusted = true;
  Gateway gw({c}, QuietOptions());
  ExpectModernCalls(gw, "web");
}

TEST(GatewayModern, ALegacyOnlyConnectorToAModernOnlyServerFailsClearly) {
  REQUIRE_FIXTURES();
  Gateway gw({ModernStdio(ProtocolEra::kLegacy)}, QuietOptions());
  auto connected = gw.ConnectAll(milliseconds(30000));
  ASSERT_FALSE(connected["modern"].ok());
  EXPECT_NE(connected["modern"].message().find("nsupported protocol version"), std::string::npos)
      << connected["modern"].ToString();
}

TEST(GatewayModern, AModernOnlyConnectorToALegacyServerFailsClearly) {
  REQUIRE_FIXTURES();
  Gateway gw({LegacyStdio(ProtocolEra::kModern)}, QuietOptions());
  auto connected = gw.ConnectAll(milliseconds(30000));
  ASSERT_FALSE(connected["legacy"].ok());
  EXPECT_NE(connected["legacy"].message().find("\"protocol\": \"modern\""), std::string::npos)
      << connected["legacy"].ToString();
}

TEST(GatewayModern, AutoFallsBackToTheLegacyHandshake) {
  REQUIRE_FIXTURES();
  Gateway gw({LegacyStdio(ProtocolEra::kAuto)}, QuietOptions());
  auto connected = gw.ConnectAll(milliseconds(30000));
  ASSERT_TRUE(connected["legacy"].ok()) << connected["legacy"].ToString();
  CallOutcome echo = gw.CallTool("legacy.echo", {{"text", "old"}}, nullptr);
  ASSERT_TRUE(echo.ok) << echo.error_message;
  EXPECT_EQ(echo.value, "old");
}

TEST(ModernHeaders, DerivedFromTheMessageAndEncodedWhereUnsafe) {
  const json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
  auto h = ModernRequestHeaders(
      {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", "get_weather"}, {"_meta", meta}}}});
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0], std::make_pair(std::string("MCP-Protocol-Version"), std::string("2026-07-28")));
  EXPECT_EQ(h[1], std::make_pair(std::string("Mcp-Method"), std::string("tools/call")));
  EXPECT_EQ(h[2], std::make_pair(std::string("Mcp-Name"), std::string("get_weather")));
  auto read = ModernRequestHeaders(
      {{"method", "resources/read"}, {"params", {{"uri", "file:///a b"}, {"_meta", meta}}}});
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[2].second, "file:///a b");
  // Legacy traffic (no modern _meta) gets none.
  EXPECT_TRUE(ModernRequestHeaders({{"method", "tools/list"}, {"params", json::object()}}).empty());
  // The specification's examples (streamable-http.mdx, "Value Encoding").
  EXPECT_EQ(EncodeHeaderValue("us-west1"), "us-west1");
  EXPECT_EQ(EncodeHeaderValue("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
  EXPECT_EQ(EncodeHeaderValue(" padded "), "=?base64?IHBhZGRlZCA=?=");
  EXPECT_EQ(EncodeHeaderValue("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
  EXPECT_EQ(EncodeHeaderValue("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
}

}  // namespace
}  // namespace airlock::gateway
