// SIGHUP's report (cli/config_reload.h): which configuration keys changed.
#include <gtest/gtest.h>

#include "cli/config_reload.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/json_log_relay.h"

namespace airlock::cli {
namespace {

using nlohmann::json;

TEST(ConfigReloadTest, ChangedKeysAreNamedByTheirDottedPath) {
  const json before = {{"server", {{"http", {{"listen", "127.0.0.1:8787"}, {"threads", 32}}}}},
                       {"roles", {{"dev", {{"inline", true}}}}},
                       {"limits", {{"default_timeout_ms", 10000}}}};
  json after = before;
  EXPECT_TRUE(ChangedKeys(before, after).empty());
  after["server"]["http"]["listen"] = "0.0.0.0:8787";
  after["roles"]["ops"] = {{"admin", true}};
  after["limits"].erase("default_timeout_ms");
  EXPECT_EQ(ChangedKeys(before, after),
            (std::vector<std::string>{"limits.default_timeout_ms", "roles.ops", "server.http.listen"}));
  EXPECT_EQ(ChangedKeys(json(1), json(2)), (std::vector<std::string>{"(the whole configuration)"}));
}

// A reload whose file no longer parses is a warning (its JSON log level
// too); one that parses is not.
TEST(ConfigReloadTest, AConfigThatNoLongerParsesIsReportedAsAWarning) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("airlock_reload_" + std::to_string(getpid()) + ".json");
  const config::Config running;
  std::ofstream(path) << "{\"server\": {\"bogus\": 1}}";
  testing::internal::CaptureStderr();
  ReportReload(path.string(), nullptr, running, nullptr);
  std::string bad = testing::internal::GetCapturedStderr();
  EXPECT_NE(bad.find("the configuration has errors, nothing changes"), std::string::npos) << bad;
  EXPECT_EQ(JsonLogLine(bad.substr(0, bad.find('\n')), 0)["level"], "warning") << bad;

  std::ofstream(path, std::ios::trunc) << "{}";
  testing::internal::CaptureStderr();
  ReportReload(path.string(), nullptr, running, nullptr);
  std::string fine = testing::internal::GetCapturedStderr();
  EXPECT_NE(fine.find("SIGHUP: "), std::string::npos) << fine;
  EXPECT_EQ(JsonLogLine(fine.substr(0, fine.find('\n')), 0)["level"], "info") << fine;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace airlock::cli
