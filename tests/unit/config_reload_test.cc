// SIGHUP's report (cli/config_reload.h): which configuration keys changed.
#include <gtest/gtest.h>

#include "cli/config_reload.h"

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

}  // namespace
}  // namespace airlock::cli
