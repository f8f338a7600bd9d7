// text_escape_test.cpp — EscapeControlCharacters: what a file or plugin controls cannot reach the
// terminal as a control sequence, and ordinary text (UTF-8 included) is printed as it is.
#include "hwinfer/text_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace hwinfer {
namespace {

TEST(TextEscape, PrintableAsciiAndUtf8AreKept) {
  EXPECT_EQ(EscapeControlCharacters("blk.0.attn_q.weight"), "blk.0.attn_q.weight");
  EXPECT_EQ(EscapeControlCharacters("Grüße, 東京 🚀"), "Grüße, 東京 🚀");
  EXPECT_EQ(EscapeControlCharacters(""), "");
}

TEST(TextEscape, TerminalControlSequencesAreEscaped) {
  // ESC [ 2 J clears the screen; BEL rings; a carriage return rewrites the line.
  EXPECT_EQ(EscapeControlCharacters("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(EscapeControlCharacters("bell\x07"), "bell\\x07");
  EXPECT_EQ(EscapeControlCharacters("ok\rEVIL\n"), "ok\\rEVIL\\n");
  EXPECT_EQ(EscapeControlCharacters("tab\there"), "tab\\there");
  EXPECT_EQ(EscapeControlCharacters(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(EscapeControlCharacters("del\x7f"), "del\\x7f");
}

TEST(TextEscape, C1ControlsAndInvalidUtf8AreEscapedByteByByte) {
  EXPECT_EQ(EscapeControlCharacters("\xc2\x9b"
                                    "31m"),
            "\\xc2\\x9b31m");                                             // U+009B, the C1 CSI
  EXPECT_EQ(EscapeControlCharacters("\xc2\xa0"), "\xc2\xa0");             // U+00A0 is printable
  EXPECT_EQ(EscapeControlCharacters("\x9b"), "\\x9b");                    // a lone C1 byte
  EXPECT_EQ(EscapeControlCharacters("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(EscapeControlCharacters("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeControlCharacters("cut\xe6\x9d"), "cut\\xe6\\x9d");     // a truncated sequence
}

TEST(TextEscape, FindInvalidUtf8GivesTheFirstBadByte) {
  constexpr size_t kValid = std::string_view::npos;
  EXPECT_EQ(FindInvalidUtf8(""), kValid);
  EXPECT_EQ(FindInvalidUtf8("plain, \xc2\xa0, \xe6\x9d\xb1, \xf0\x9f\xa6\x99"), kValid);
  EXPECT_EQ(FindInvalidUtf8("ab\x9b"), 2u);                // a lone continuation byte
  EXPECT_EQ(FindInvalidUtf8("\xe6\x9d\xb1\xc0\xaf"), 3u);  // overlong '/' after a valid character
  EXPECT_EQ(FindInvalidUtf8("x\xed\xa0\x80"), 1u);         // a surrogate
  EXPECT_EQ(FindInvalidUtf8("cut\xe6\x9d"), 3u);           // a truncated sequence
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);      // past U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xff"), 0u);
}

}  // namespace
}  // namespace hwinfer
