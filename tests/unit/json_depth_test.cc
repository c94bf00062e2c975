// base/json_depth.h: depth measured without recursion, on values far deeper
// than any recursive walk could take.
#include "base/json_depth.h"

#include <gtest/gtest.h>

namespace airlock {
namespace {

using nlohmann::json;

TEST(JsonDepth, CountsLevels) {
  EXPECT_FALSE(JsonDeeperThan(json(1), 0));
  EXPECT_TRUE(JsonDeeperThan(json::array(), 0));
  EXPECT_FALSE(JsonDeeperThan(json::array(), 1));
  EXPECT_FALSE(JsonDeeperThan(json::parse(R"({"a":[1,{"b":2}]})"), 3));
  EXPECT_TRUE(JsonDeeperThan(json::parse(R"({"a":[1,{"b":[]}]})"), 3));
}

TEST(JsonDepth, MillionLevelsDoNotOverflowTheStack) {
  std::string text = std::string(1000000, '[') + std::string(1000000, ']');
  json deep = json::parse(text);  // nlohmann's parser is iterative
  EXPECT_TRUE(JsonDeeperThan(deep, 256));
  EXPECT_FALSE(JsonDeeperThan(deep, 1000000));
}

}  // namespace
}  // namespace airlock
