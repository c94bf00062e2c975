// `airlock run --code-mode`: the execute tool from the command line, against
// a real downstream MCP server (tests/fixtures/mcp-servers/test-server.mjs).
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run_util.h"

namespace airlock {
namespace {

namespace fs = std::filesystem;
const std::string kFixtures = std::string(AIRLOCK_SOURCE_DIR) + "/tests/fixtures/mcp-servers";
const std::string kAirlock = std::string(AIRLOCK_BINARY_DIR) + "/airlock";

class CliCodeModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kFixtures + "/node_modules/@modelcontextprotocol/sdk") ||
        !fs::exists(std::string(AIRLOCK_BINARY_DIR) + "/airlock-js")) {
      GTEST_SKIP() << "needs the npm fixtures and airlock-js (scripts/setup.sh)";
    }
    dir_ = fs::temp_directory_path() / ("airlock-cli-cm-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    nlohmann::json config = {
        {"mcpServers",
         {{"test",
           {{"command", "node"}, {"args", {kFixtures + "/test-server.mjs"}}, {"trusted", true}, {"stderr", "discard"}}}}},
        {"codeMode", {{"limits", {{"max_calls", 3}}}}}};
    std::ofstream(dir_ / "airlock.json") << config.dump();
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // Runs `airlock run --code-mode` on `code`; returns {exit code, stdout}.
  std::pair<int, std::string> Run(const std::string& language, const std::string& code) {
    const fs::path src = dir_ / (language == "python" ? "p.py" : "p.js");
    std::ofstream(src) << code;
    const std::string cmd = kAirlock + " run --code-mode --config " + (dir_ / "airlock.json").string() +
                            " --lang " + language + " " + src.string() + " 2>/dev/null";
    testing::CliOutcome o = testing::RunCommandLine(cmd);
    return {o.rc, std::move(o.out)};
  }

  fs::path dir_;
};

TEST_F(CliCodeModeTest, RunsAProgramAgainstTheConfiguredConnectors) {
  auto [code, out] = Run("javascript", "return await tools.call('test.echo', {text: 'via cli'})");
  ASSERT_EQ(code, 0) << out;
  nlohmann::json r = nlohmann::json::parse(out);
  EXPECT_TRUE(r["ok"].get<bool>());
  EXPECT_EQ(r["result"], "via cli");
}

TEST_F(CliCodeModeTest, AppliesTheConfiguredLimitsAndExitsNonZeroOnError) {
  // codeMode.limits.max_calls is 3 in the config: the 4th request fails.
  auto [code, out] = Run("python", "for i in range(4):\n    tools.call('test.echo', {'text': str(i)})\n");
  EXPECT_EQ(code, 1) << out;
  nlohmann::json r = nlohmann::json::parse(out);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["error"]["code"], "E_LIMIT_CALLS") << out;
  EXPECT_EQ(r["calls"]["total"], 4);
  EXPECT_EQ(r["calls"]["denied"], 1);
}

}  // namespace
}  // namespace airlock
