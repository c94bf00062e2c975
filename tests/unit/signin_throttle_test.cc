// SignInThrottle: failures per source in fixed windows, 429 past the limit,
// and at most max_failures + 1 audit rows per source and window.
#include "console/signin_throttle.h"

#include <gtest/gtest.h>

namespace airlock::console {
namespace {

using namespace std::chrono_literals;

TEST(SignInThrottle, LimitsFailuresPerSourceAndCoalescesTheRows) {
  SignInThrottle::Clock::time_point now{};
  SignInThrottle t({.max_failures = 3, .window = 60s, .now = [&] { return now; }});
  int rows = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.Check("1.2.3.4").retry_after_s, 0);
    ASSERT_TRUE(t.Failed("1.2.3.4").has_value());
    ++rows;
  }
  uint64_t summarized = 0;
  for (int i = 0; i < 200; ++i) {
    now += 10ms;
    SignInThrottle::Verdict v = t.Check("1.2.3.4");
    EXPECT_GE(v.retry_after_s, 1);
    EXPECT_LE(v.retry_after_s, 60);
    if (v.audit_attempts) {
      ++rows;
      summarized += *v.audit_attempts;
    }
  }
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(summarized, 1u);  // the first refusal's row; 199 wait for the next
  EXPECT_EQ(t.Check("5.6.7.8").retry_after_s, 0) << "another source is not limited";
  // A concurrent failure past the limit is coalesced too.
  EXPECT_FALSE(t.Failed("1.2.3.4").has_value());
  // After the window: allowed again, and the next row carries the suppressed attempts.
  now += 61s;
  EXPECT_EQ(t.Check("1.2.3.4").retry_after_s, 0);
  EXPECT_EQ(t.Failed("1.2.3.4"), std::optional<uint64_t>(1 + 199 + 1));
}

TEST(SignInThrottle, ASuccessClearsTheSource) {
  SignInThrottle::Clock::time_point now{};
  SignInThrottle t({.max_failures = 2, .window = 60s, .now = [&] { return now; }});
  t.Failed("a");
  EXPECT_EQ(t.Succeeded("a"), 0u);
  t.Failed("a");
  EXPECT_EQ(t.Check("a").retry_after_s, 0) << "one failure since the success";
  t.Failed("a");
  EXPECT_GT(t.Check("a").retry_after_s, 0);
}

}  // namespace
}  // namespace airlock::console
