#include <gtest/gtest.h>

#include <cctype>

#include <fstream>
#include <string>

#include <unistd.h>

#include "config/config.h"

namespace airlock::config {
namespace {

TEST(McpConfig, DefaultsNeedNoFile) {
  Config c = DefaultConfig();
  EXPECT_EQ(c.server.http.listen, "127.0.0.1:8787");
  EXPECT_EQ(c.server.max_message_bytes, 4u << 20);
  EXPECT_EQ(c.limits.max_timeout_ms, 60000u);
  EXPECT_GE(c.ResolvedMaxConcurrentRuns(), 1);
  StatusOr<Config> parsed = ParseConfig("{}");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(ConfigToJson(*parsed), ConfigToJson(c));
}

TEST(McpConfig, ValuesOverrideDefaults) {
  StatusOr<Config> c = ParseConfig(R"({
    // comments are allowed
    "server": {"http": {"listen": "[::1]:9000", "allowed_origins": ["https://x.example"]},
               "max_concurrent_runs": 3},
    "limits": {"max_timeout_ms": 5000, "default_timeout_ms": 2000},
    "languages": {"enabled": ["python"]},
    "mcpServers": {"fs": {"command": "x"}}
  })");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.http.listen, "[::1]:9000");
  EXPECT_EQ(c->server.http.allowed_origins, std::vector<std::string>{"https://x.example"});
  EXPECT_EQ(c->ResolvedMaxConcurrentRuns(), 3);
  EXPECT_EQ(c->limits.max_timeout_ms, 5000u);
  EXPECT_EQ(c->languages.enabled, std::vector<std::string>{"python"});
  EXPECT_EQ(c->mcp_servers["fs"]["command"], "x");
  // Round trip.
  StatusOr<Config> again = ConfigFromJson(ConfigToJson(*c));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(ConfigToJson(*again), ConfigToJson(*c));
}

TEST(McpConfig, AuditSyncAndPoolPrestart) {
  Config d = DefaultConfig();
  EXPECT_EQ(d.audit.sync, "normal");
  EXPECT_TRUE(d.pool.prestart);
  StatusOr<Config> c = ParseConfig(R"({"audit": {"sync": "full"}, "pool": {"prestart": false}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->audit.sync, "full");
  EXPECT_FALSE(c->pool.prestart);
  c = ParseConfig(R"({"audit": {"sync": "sometimes"}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "config.audit.sync: expected \"full\" or \"normal\"");
}

TEST(McpConfig, UnknownKeysNameThePath) {
  StatusOr<Config> c = ParseConfig(R"({"server": {"http": {"bnd": "x"}}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "config.server.http: unknown key \"bnd\"");
  c = ParseConfig(R"({"limitz": {}})");
  EXPECT_EQ(c.status().message(), "config: unknown key \"limitz\"");
}

TEST(McpConfig, BadValuesNameThePath) {
  StatusOr<Config> c = ParseConfig(R"({"limits": {"max_timeout_ms": "60s"}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "config.limits.max_timeout_ms: expected a non-negative integer");
  c = ParseConfig(R"({"server": {"http": {"listen": "localhost"}}})");
  EXPECT_NE(c.status().message().find("config.server.http.listen"), std::string::npos);
  c = ParseConfig(R"({"server": {"max_message_bytes": 10}})");
  EXPECT_NE(c.status().message().find("out of range"), std::string::npos);
  c = ParseConfig(R"({"languages": {"enabled": ["python", 3]}})");
  EXPECT_EQ(c.status().message(), "config.languages.enabled[1]: expected a string");
  // An unknown language is an error naming the key and the known languages.
  c = ParseConfig(R"({"languages": {"enabled": ["python", "cobol"]}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("config.languages.enabled[1]: unknown language \"cobol\"; the languages are: ", 0),
            0u)
      << c.status().message();
  EXPECT_NE(c.status().message().find("python"), std::string::npos);
  EXPECT_NE(c.status().message().find("typescript"), std::string::npos);
  c = ParseConfig(R"({"limits": {"default_timeout_ms": 90000}})");
  EXPECT_NE(c.status().message().find("exceeds max_timeout_ms"), std::string::npos);
  c = ParseConfig(R"({"server": []})");
  EXPECT_EQ(c.status().message(), "config.server: expected an object");
  c = ParseConfig("{not json");
  EXPECT_FALSE(c.ok());
}

TEST(McpConfig, LoadConfigPrefixesTheFileName) {
  // A name of its own (ctest runs tests in parallel), removed afterwards.
  std::string path = ::testing::TempDir() + "/airlock_cfg_test." + std::to_string(::getpid()) + ".json";
  {
    std::ofstream(path) << R"({"server": {"http": {"threads": "many"}}})";
  }
  StatusOr<Config> c = LoadConfig(path);
  ::unlink(path.c_str());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), path + ": config.server.http.threads: expected a non-negative integer");
  EXPECT_EQ(LoadConfig(path + ".missing").status().code(), StatusCode::kNotFound);
}

TEST(McpConfig, SchemaDocCoversEveryKey) {
  nlohmann::json doc = ConfigSchemaDoc();
  EXPECT_EQ(doc["server.http.listen"]["default"], "127.0.0.1:8787");
  EXPECT_EQ(doc["limits.max_memory_mb"]["default"], 2048);
  // Every leaf of the defaults is documented.
  nlohmann::json flat = ConfigToJson(DefaultConfig()).flatten();
  for (auto& [ptr, value] : flat.items()) {
    std::string key = ptr.substr(1);
    for (char& ch : key) {
      if (ch == '/') ch = '.';
    }
    if (key.find("allowed_") != std::string::npos || key.find("enabled") != std::string::npos) continue;
    // A list's elements ("pool.warm.0") are documented as the list.
    while (!key.empty() && std::isdigit(static_cast<unsigned char>(key.back()))) key.pop_back();
    if (!key.empty() && key.back() == '.') key.pop_back();
    EXPECT_TRUE(doc.contains(key)) << key;
  }
}

TEST(McpConfig, ParseListenAddress) {
  std::string host;
  int port;
  ASSERT_TRUE(ParseListenAddress("[::1]:8787", &host, &port).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 8787);
  ASSERT_TRUE(ParseListenAddress("0.0.0.0:0", &host, &port).ok());
  EXPECT_EQ(port, 0);
  EXPECT_FALSE(ParseListenAddress("host:99999", &host, &port).ok());
  EXPECT_FALSE(ParseListenAddress(":80", &host, &port).ok());
}

}  // namespace
}  // namespace airlock::config
