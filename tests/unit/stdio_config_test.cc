// The stdio configuration `airlock serve --http` prints (cli/stdio_config.h).
#include "cli/stdio_config.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace airlock::cli {
namespace {

TEST(StdioClientConfigTest, CarriesTheServersConfigAsAnAbsolutePath) {
  const std::string cwd = std::filesystem::current_path().string();
  nlohmann::json c = StdioClientConfig({.executable = "/opt/airlock/airlock",
                                        .config_path = "conf/airlock.json",
                                        .state_dir = "./state",
                                        .endpoint = "team",
                                        .allow_degraded = true});
  const nlohmann::json& s = c["mcpServers"]["airlock"];
  EXPECT_EQ(s["command"], "/opt/airlock/airlock");
  EXPECT_EQ(s["args"], nlohmann::json::array({"serve", "--config", cwd + "/conf/airlock.json", "--state-dir",
                                              cwd + "/state", "--endpoint", "team", "--allow-degraded"}));
}

TEST(StdioClientConfigTest, PlainServeWithoutFlags) {
  nlohmann::json c = StdioClientConfig({.executable = "/opt/airlock/airlock"});
  EXPECT_EQ(c["mcpServers"]["airlock"]["args"], nlohmann::json::array({"serve"}));
}

TEST(StdioClientConfigTest, AbsolutePathsStayAsTheyAre) {
  nlohmann::json c = StdioClientConfig({.executable = "/opt/airlock/airlock", .config_path = "/etc/airlock/a.json"});
  EXPECT_EQ(c["mcpServers"]["airlock"]["args"], nlohmann::json::array({"serve", "--config", "/etc/airlock/a.json"}));
}

}  // namespace
}  // namespace airlock::cli
