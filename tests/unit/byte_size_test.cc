// base/byte_size.h: sizes stated exactly (limits) or approximately (measurements).
#include "base/byte_size.h"

#include <gtest/gtest.h>

namespace airlock {
namespace {

TEST(ExactBytesTest, NeverRoundsALimit) {
  EXPECT_EQ(ExactBytes(1000), "1000 bytes");  // was described as "0 KiB"
  EXPECT_EQ(ExactBytes(0), "0 bytes");
  EXPECT_EQ(ExactBytes(1), "1 byte");
  EXPECT_EQ(ExactBytes(1023), "1023 bytes");
  EXPECT_EQ(ExactBytes(1024), "1 KiB");
  EXPECT_EQ(ExactBytes(1536), "1.5 KiB");
  EXPECT_EQ(ExactBytes(1280), "1.25 KiB");
  EXPECT_EQ(ExactBytes(1152), "1.125 KiB");
  EXPECT_EQ(ExactBytes(1025), "1025 bytes");
  EXPECT_EQ(ExactBytes(1000 * 1024), "1000 KiB");
  EXPECT_EQ(ExactBytes(1u << 20), "1 MiB");
  EXPECT_EQ(ExactBytes(3u << 19), "1.5 MiB");
  EXPECT_EQ(ExactBytes((1u << 20) + 1024), "1025 KiB");
  EXPECT_EQ(ExactBytes(8ull << 30), "8 GiB");
}

TEST(ApproxBytesTest, OneDecimalInTheLargestUnit) {
  EXPECT_EQ(ApproxBytes(512), "512 B");
  EXPECT_EQ(ApproxBytes(1536), "1.5 KiB");
  EXPECT_EQ(ApproxBytes(12345), "12.1 KiB");
  EXPECT_EQ(ApproxBytes(5u << 20), "5.0 MiB");
}

}  // namespace
}  // namespace airlock
