#include "base/terminal_text.h"

#include <gtest/gtest.h>

namespace airlock {
namespace {

TEST(TerminalTextTest, PlainTextAndUtf8PassUnchanged) {
  EXPECT_EQ(TerminalText("def f(x):\n\treturn x  # café €  ✓ 😀", TextShape::kBlock),
            "def f(x):\n\treturn x  # café €  ✓ 😀");
  EXPECT_EQ(TerminalText("a\\x1b is text"), "a\\x1b is text");
}

TEST(TerminalTextTest, EscapesC0AndDel) {
  EXPECT_EQ(TerminalText("ok\x1b[1A\x1b[2Khidden", TextShape::kBlock), "ok\\x1b[1A\\x1b[2Khidden");
  EXPECT_EQ(TerminalText(std::string("a\0b\rc\x7f", 6), TextShape::kBlock), "a\\x00b\\x0dc\\x7f");
  // One line: newlines and tabs too (a name cannot fake a row).
  EXPECT_EQ(TerminalText("a\nb\tc", TextShape::kLine), "a\\x0ab\\x09c");
  EXPECT_EQ(TerminalText("a\nb\tc", TextShape::kBlock), "a\nb\tc");
}

TEST(TerminalTextTest, EscapesC1ControlsEncodedOrRaw) {
  EXPECT_EQ(TerminalText("x\xc2\x9b" "2Ky"), "x\\u009b2Ky");  // CSI as UTF-8
  EXPECT_EQ(TerminalText("x\xc2\x85y"), "x\\u0085y");
  EXPECT_EQ(TerminalText("x\x9b" "2Ky"), "x\\x9b2Ky");  // a lone 8-bit CSI: not UTF-8
}

TEST(TerminalTextTest, EscapesBidiControls) {
  EXPECT_EQ(TerminalText("if (x) { \xe2\x80\xae } \xe2\x81\xa6 done \xe2\x81\xa9"),
            "if (x) { \\u202e } \\u2066 done \\u2069");
  for (const char* s : {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x80\xae",
                        "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9"}) {
    const std::string out = TerminalText(s);
    EXPECT_EQ(out.substr(0, 3), "\\u2") << out;
    EXPECT_EQ(out.size(), 6u) << out;
  }
}

TEST(TerminalTextTest, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(TerminalText("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(TerminalText("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(TerminalText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(TerminalText("\xe2\x82"), "\\xe2\\x82");           // cut short
  // Every byte value in a row forms no valid sequence: the output is plain
  // ASCII without a control other than \n and \t.
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string out = TerminalText(all, TextShape::kBlock);
  for (unsigned char c : out) {
    EXPECT_TRUE((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') << static_cast<int>(c);
  }
}

}  // namespace
}  // namespace airlock
