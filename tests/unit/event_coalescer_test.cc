// EventCoalescer: a flood writes at most max_rows rows per window and the
// events it held back are counted in the next row.
#include "audit/event_coalescer.h"

#include <gtest/gtest.h>

namespace airlock::audit {
namespace {

TEST(EventCoalescerTest, AFloodWritesAtMostMaxRowsAndCarriesTheCount) {
  EventCoalescer::Clock::time_point now{};
  EventCoalescer c({.max_rows = 3, .window = std::chrono::seconds(60), .now = [&] { return now; }});
  uint64_t suppressed = 99;
  int rows = 0;
  for (int i = 0; i < 500; ++i) {
    if (c.Admit(&suppressed)) {
      ++rows;
      EXPECT_EQ(suppressed, 0u);
    }
  }
  EXPECT_EQ(rows, 3);
  now += std::chrono::seconds(61);
  ASSERT_TRUE(c.Admit(&suppressed));
  EXPECT_EQ(suppressed, 497u) << "every event held back is counted in the next row";
  ASSERT_TRUE(c.Admit(&suppressed));
  EXPECT_EQ(suppressed, 0u);
}

}  // namespace
}  // namespace airlock::audit
