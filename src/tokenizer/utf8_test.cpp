#include "tokenizer/utf8.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

TEST(Utf8Test, DecodesOneToFourByteCharacters) {
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";  // a é 中 😀
  Utf8Step step = decode_utf8_step(text, 0);
  EXPECT_EQ(step.kind, Utf8StepKind::kValid);
  EXPECT_EQ(step.code_point, U'a');
  EXPECT_EQ(step.length, 1u);
  step = decode_utf8_step(text, 1);
  EXPECT_EQ(step.code_point, U'\u00E9');
  EXPECT_EQ(step.length, 2u);
  step = decode_utf8_step(text, 3);
  EXPECT_EQ(step.code_point, U'\u4E2D');
  EXPECT_EQ(step.length, 3u);
  step = decode_utf8_step(text, 6);
  EXPECT_EQ(step.code_point, U'\U0001F600');
  EXPECT_EQ(step.length, 4u);
}

TEST(Utf8Test, RejectsStrayAndForbiddenBytesOneAtATime) {
  for (const char* bad : {"\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xF5\x80\x80\x80", "\xFF"}) {
    const Utf8Step step = decode_utf8_step(bad, 0);
    EXPECT_EQ(step.kind, Utf8StepKind::kInvalid) << bad;
    EXPECT_EQ(step.length, 1u) << bad;
  }
}

TEST(Utf8Test, RejectsOverlongSurrogateAndTooLargeAfterTheLeadByte) {
  // E0 80..9F would be overlong, ED A0..BF a surrogate, F0 80..8F overlong, F4 90.. above U+10FFFF: in each case
  // only the lead byte is the ill-formed subpart.
  for (const char* bad : {"\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80"}) {
    const Utf8Step step = decode_utf8_step(bad, 0);
    EXPECT_EQ(step.kind, Utf8StepKind::kInvalid);
    EXPECT_EQ(step.length, 1u);
  }
}

TEST(Utf8Test, InvalidContinuationConsumesTheMaximalSubpart) {
  const Utf8Step step = decode_utf8_step(
      "\xF0\x9F\x98"
      "A",
      0);  // 😀 missing its last byte, then 'A'
  EXPECT_EQ(step.kind, Utf8StepKind::kInvalid);
  EXPECT_EQ(step.length, 3u);
}

TEST(Utf8Test, ReportsACharacterCutByTheEndOfText) {
  const Utf8Step step = decode_utf8_step("\xF0\x9F", 0);
  EXPECT_EQ(step.kind, Utf8StepKind::kTruncated);
  EXPECT_EQ(step.length, 2u);
}

TEST(Utf8Test, AppendEncodesEveryLength) {
  std::string out;
  append_utf8(out, U'a');
  append_utf8(out, U'\u00E9');
  append_utf8(out, U'\u4E2D');
  append_utf8(out, U'\U0001F600');
  EXPECT_EQ(out, "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
}

TEST(Utf8Test, ValidUtf8ReplacesEachIllFormedRunOnce) {
  // The first two bytes of 长 (E9 95 BF), a stray continuation byte, then a surrogate's encoding (ED A0 80: three
  // maximal subparts of one byte each, since ED A0 can never begin a character).
  EXPECT_EQ(valid_utf8("a\xE9\x95"), "a\xEF\xBF\xBD");
  EXPECT_EQ(valid_utf8("\x80z"), "\xEF\xBF\xBDz");
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(valid_utf8("\xE4\xB8\xAD ok"), "\xE4\xB8\xAD ok");
  EXPECT_EQ(valid_utf8(""), "");
}

TEST(Utf8Test, FirstInvalidByteOffset) {
  EXPECT_EQ(first_invalid_utf8("plain \xE4\xB8\xAD"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("ab\xFF"
                               "cd"),
            2u);
  EXPECT_EQ(first_invalid_utf8("\xE4\xB8\xAD\xE4\xB8"), 3u);  // cut at the end counts as invalid
  EXPECT_EQ(first_invalid_utf8(""), std::string_view::npos);
}

}  // namespace
}  // namespace minigen
