#include "base/encoding.h"

#include <gtest/gtest.h>

#include <vector>

namespace airlock {
namespace {

TEST(Utf8Test, ValidAndInvalid) {
  EXPECT_TRUE(IsValidUtf8("hello"));
  EXPECT_TRUE(IsValidUtf8("gr\xC3\xBC\xC3\x9F"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // > U+10FFFF
}

TEST(Utf8Test, SanitizeReplacesBadBytes) {
  EXPECT_EQ(SanitizeUtf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xC3\x28\xE2\x82")));
}

TEST(Utf8Test, TruncateNeverSplitsSequence) {
  std::string s = "ab\xE2\x82\xAC";  // "ab€"
  EXPECT_EQ(TruncateUtf8(s, 3), "ab");
  EXPECT_EQ(TruncateUtf8(s, 4), "ab");
  EXPECT_EQ(TruncateUtf8(s, 5), s);
}

TEST(Base64Test, RoundTrip) {
  for (std::string s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\0\xff\x10", 3)}) {
    std::string back;
    ASSERT_TRUE(Base64Decode(Base64Encode(s), &back)) << s;
    EXPECT_EQ(back, s);
  }
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  std::string out;
  EXPECT_FALSE(Base64Decode("Zm9v!mFy", &out));
  EXPECT_FALSE(Base64Decode("Zm=9", &out));
  EXPECT_FALSE(Base64Decode("Z", &out));
}

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

}  // namespace
}  // namespace airlock
