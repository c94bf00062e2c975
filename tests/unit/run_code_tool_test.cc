// run_code's definition (description, input schema) and its argument check.
#include <gtest/gtest.h>

#include "config/config.h"
#include "mcp/tools/run_code_args.h"
#include "mcp/tools/run_code_tool.h"

namespace airlock::mcp {
namespace {

std::vector<runtimes::LanguageInfo> Python() {
  runtimes::LanguageInfo l;
  l.name = "python";
  l.tiers = {"native"};
  return {l};
}

TEST(RunCodeToolTest, DescriptionStatesTheOutputLimitExactly) {
  config::LimitsConfig limits;
  limits.max_output_bytes = 1000;
  std::string d = RunCodeTool::Description(Python(), limits);
  EXPECT_NE(d.find("1000 bytes of stdout/stderr"), std::string::npos) << d;
  EXPECT_EQ(d.find("0 KiB"), std::string::npos) << d;
  limits.max_output_bytes = 1536;
  EXPECT_NE(RunCodeTool::Description(Python(), limits).find("1.5 KiB of stdout/stderr"), std::string::npos);
  limits.max_output_bytes = 1 << 20;
  EXPECT_NE(RunCodeTool::Description(Python(), limits).find("1 MiB of stdout/stderr"), std::string::npos);
}

TEST(RunCodeToolTest, SchemaDoesNotRequireLanguageSinceASessionCellOmitsIt) {
  nlohmann::json schema = RunCodeTool::InputSchema(Python(), config::LimitsConfig());
  EXPECT_EQ(schema["required"], nlohmann::json::array({"code"}));
  EXPECT_TRUE(schema["properties"].contains("language"));
  EXPECT_TRUE(schema["properties"].contains("session_id"));
}

TEST(RunCodeToolTest, WithoutSessionLanguageIsStillRequiredAndTheErrorNamesIt) {
  StatusOr<runtimes::RunRequest> r =
      ParseRunCodeArguments({{"code", "print(1)"}}, Python(), config::LimitsConfig(), TierRule{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("arguments.language"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("session_id"), std::string::npos) << r.status().message();
  EXPECT_TRUE(ParseRunCodeArguments({{"language", "python"}, {"code", "print(1)"}}, Python(), config::LimitsConfig(),
                                    TierRule{})
                  .ok());
}

}  // namespace
}  // namespace airlock::mcp
