// FitToReplyBudget / BuildRunCodeResult: a tools/call result never exceeds
// the reply budget (the official SDK's stdio transport drops the connection
// on a message over 10 MiB), whatever the run produced.
#include <string>

#include <gtest/gtest.h>

#include "mcp/tools/run_code_result.h"

namespace airlock::mcp {
namespace {

runtimes::RunResult OkResult() {
  runtimes::RunResult r;
  r.status = runtimes::RunStatus::kOk;
  r.exit_code = 0;
  r.language = "python";
  return r;
}

runtimes::OutputFile Binary(const std::string& name, size_t bytes) {
  runtimes::OutputFile f;
  f.name = name;
  f.content.assign(bytes, '\xff');  // not UTF-8: base64 in the result
  f.size = bytes;
  return f;
}

TEST(ReplyBudgetTest, FilesPastTheBudgetAreNamedNotSent) {
  runtimes::RunResult r = OkResult();
  for (int i = 0; i < 4; ++i) r.files.push_back(Binary("f" + std::to_string(i) + ".bin", 3u << 20));
  const nlohmann::json reply = BuildRunCodeResult(r);
  EXPECT_LE(reply.dump().size(), kMaxToolResultBytes);
  const nlohmann::json& sc = reply["structuredContent"];
  ASSERT_EQ(sc["files"].size(), 1u);  // 3 MiB -> 4 MiB base64, twice: one fits in 9 MiB
  EXPECT_EQ(sc["files"][0]["name"], "f0.bin");
  ASSERT_EQ(sc["files_skipped"].size(), 3u);
  for (const auto& s : sc["files_skipped"]) EXPECT_EQ(s["reason"], "max_reply_bytes");
  EXPECT_TRUE(sc["files_truncated"].get<bool>());
  EXPECT_NE(reply["content"][0]["text"].get<std::string>().find("max_reply_bytes"), std::string::npos);
}

TEST(ReplyBudgetTest, EscapedOutputIsCutToFit) {
  runtimes::RunResult r = OkResult();
  r.stdout_text.assign(1u << 20, '\x01');  // 6 bytes each in JSON, in two places
  r.stderr_text.assign(1u << 20, '\x02');
  const nlohmann::json reply = BuildRunCodeResult(r);
  EXPECT_LE(reply.dump().size(), kMaxToolResultBytes);
  EXPECT_TRUE(reply["structuredContent"]["stdout_truncated"].get<bool>() ||
              reply["structuredContent"]["stderr_truncated"].get<bool>());
}

TEST(ReplyBudgetTest, AResultThatFitsIsUnchanged) {
  runtimes::RunResult r = OkResult();
  r.stdout_text = "hello\n";
  r.files.push_back(Binary("small.bin", 1000));
  const runtimes::RunResult fitted = FitToReplyBudget(r, kMaxToolResultBytes);
  EXPECT_EQ(runtimes::ToJson(fitted), runtimes::ToJson(r));
  // Near the budget, too: a file that fits exactly stays.
  runtimes::RunResult big = OkResult();
  big.files.push_back(Binary("big.bin", 2u << 20));
  EXPECT_EQ(FitToReplyBudget(big, kMaxToolResultBytes).files.size(), 1u);
}

}  // namespace
}  // namespace airlock::mcp
