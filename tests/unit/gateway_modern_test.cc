// Code-mode connectors against a downstream server that speaks only the
// modern era of MCP (2026-07-28): tests/fixtures/mcp-servers/modern-server.mjs,
// built on the official SDK v2 server package with legacy requests refused,
// over stdio and Streamable HTTP. The legacy servers of
// gateway_servers_test.cc cover the fallback: every connector there probes
// with server/discover first and falls back to initialize.
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gateway/child_process.h"
#include "gateway/gateway.h"
#include "gateway/modern_headers.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const std::string kFixtures = std::string(AIRLOCK_SOURCE_DIR) + "/tests/fixtures/mcp-servers";

bool FixturesInstalled() {
  return std::filesystem::exists(kFixtures + "/node_modules/@modelcontextprotocol/server") &&
         !FindExecutable("node", getenv("PATH") ? getenv("PATH") : "").empty();
}

#define REQUIRE_FIXTURES()                                                                        \
  if (!FixturesInstalled()) GTEST_SKIP() << "run scripts/setup.sh (npm install in " << kFixtures \
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
  c.args = {kFixtures + "/modern-server.mjs"};
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
  c.args = {kFixtures + "/test-server.mjs"};
  c.stderr_mode = StderrMode::kDiscard;
  c.timeout_ms = 20000;
  c.protocol = era;
  return c;
}

// modern-server.mjs --http 0: the port it prints.
class ModernHttpServer {
 public:
  ModernHttpServer() {
    SpawnOptions opts;
    opts.command = "node";
    opts.args = {kFixtures + "/modern-server.mjs", "--http", "0"};
    opts.env = {std::string("PATH=") + getenv("PATH"), "HOME=/tmp"};
    opts.search_path = getenv("PATH");
    opts.capture_stderr = false;
    auto child = ChildProcess::Spawn(opts);
    if (!child.ok()) return;
    child_ = std::move(child).value();
    std::string line;
    const auto until = Clock::now() + std::chrono::seconds(15);
    while (Clock::now() < until && line.find('\n') == std::string::npos) {
      pollfd p{child_->stdout_fd(), POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      ssize_t n = read(child_->stdout_fd(), buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    if (line.rfind("listening ", 0) == 0) port_ = std::stoi(line.substr(10));
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

 private:
  std::unique_ptr<ChildProcess> child_;
  int port_ = 0;
};

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
  ModernHttpServer server;
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
