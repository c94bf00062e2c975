// The "codeMode" config section and its wiring into the config file.
#include <gtest/gtest.h>

#include "codemode/settings.h"
#include "config/config.h"

namespace airlock::codemode {
namespace {

using nlohmann::json;

TEST(CodeModeSettingsTest, DefaultsWhenAbsent) {
  StatusOr<Settings> s = SettingsFromJson(json());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->enabled);
  EXPECT_EQ(s->limits.wall_ms, 10000u);
  EXPECT_EQ(s->limits.max_calls, 500u);
  EXPECT_EQ(s->limits.max_concurrent, 16u);
  EXPECT_EQ(s->limits.max_args_bytes, 256u << 10);
  EXPECT_EQ(s->limits.max_result_bytes, 1u << 20);
  EXPECT_EQ(s->limits.max_console_bytes, 64u << 10);
}

TEST(CodeModeSettingsTest, AdminMayRaiseOrLowerLimitsAndDisable) {
  StatusOr<Settings> s = SettingsFromJson({{"enabled", false}, {"limits", {{"wall_ms", 30000}, {"max_calls", 20}}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->enabled);
  EXPECT_EQ(s->limits.wall_ms, 30000u);
  EXPECT_EQ(s->limits.max_calls, 20u);
  EXPECT_EQ(s->limits.max_concurrent, 16u);  // untouched
}

TEST(CodeModeSettingsTest, BadValuesNameTheKey) {
  auto message = [](const json& j) {
    StatusOr<Settings> s = SettingsFromJson(j);
    return s.ok() ? std::string("ok") : s.status().message();
  };
  EXPECT_NE(message({{"enable", true}}).find("codeMode.enable"), std::string::npos);
  EXPECT_NE(message({{"enabled", "yes"}}).find("codeMode.enabled"), std::string::npos);
  EXPECT_NE(message({{"limits", {{"max_calls", 0}}}}).find("max_calls"), std::string::npos);
  EXPECT_NE(message({{"limits", {{"wall_ms", -5}}}}).find("wall_ms"), std::string::npos);
  EXPECT_NE(message({{"limits", {{"bogus", 1}}}}).find("bogus"), std::string::npos);
  EXPECT_NE(message(json::array()).find("codeMode"), std::string::npos);
}

TEST(CodeModeSettingsTest, ConfigFileKeepsTheSectionAndRoundTrips) {
  StatusOr<config::Config> c = config::ParseConfig(R"({"codeMode": {"limits": {"max_calls": 7}}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  StatusOr<Settings> s = SettingsFromJson(c->code_mode);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->limits.max_calls, 7u);
  StatusOr<config::Config> again = config::ConfigFromJson(config::ConfigToJson(*c));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->code_mode, c->code_mode);
  EXPECT_FALSE(config::ParseConfig(R"({"codeMode": 3})").ok());
}

TEST(CodeModeSettingsTest, CallerMayOnlyLower) {
  Limits admin;
  StatusOr<Limits> lower = ApplyCallerLimits(admin, {{"wall_ms", 500}, {"max_calls", 0}});
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();
  EXPECT_EQ(lower->wall_ms, 500u);
  EXPECT_EQ(lower->max_calls, 500u);  // 0 keeps the admin's value
  StatusOr<Limits> higher = ApplyCallerLimits(admin, {{"wall_ms", 20000}});
  ASSERT_FALSE(higher.ok());
  EXPECT_NE(higher.status().message().find("wall_ms"), std::string::npos);
}

}  // namespace
}  // namespace airlock::codemode
