// base/rate_window.h with an injected clock.
#include "base/rate_window.h"

#include <gtest/gtest.h>

namespace airlock {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

TEST(RateWindow, AllowsMaxPerWindowPerKeyThenSlides) {
  RateWindow::Clock::time_point now{};
  RateWindow w(3, minutes(60), [&] { return now; });
  EXPECT_TRUE(w.TryAcquire("bob"));
  now += minutes(10);
  EXPECT_TRUE(w.TryAcquire("bob"));
  EXPECT_TRUE(w.TryAcquire("bob"));
  EXPECT_FALSE(w.TryAcquire("bob"));  // a refusal records nothing
  EXPECT_TRUE(w.TryAcquire("alice"));  // keys are separate
  EXPECT_EQ(w.RetryAfter("bob"), minutes(50));
  now += minutes(50);  // the first event leaves the window
  EXPECT_EQ(w.RetryAfter("bob"), seconds(0));
  EXPECT_TRUE(w.TryAcquire("bob"));
  EXPECT_FALSE(w.TryAcquire("bob"));
}

TEST(RateWindow, ZeroMeansNoLimit) {
  RateWindow w(0, minutes(1));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(w.TryAcquire("x"));
}

}  // namespace
}  // namespace airlock
