#include "tokenizer/byte_level.h"

#include <gtest/gtest.h>

#include <set>

namespace minigen {
namespace {

TEST(ByteLevelTest, MapIsABijectionOntoPrintableCodePoints) {
  std::set<char32_t> seen;
  for (int byte = 0; byte < 256; ++byte) {
    const char32_t code_point = byte_to_code_point(static_cast<std::uint8_t>(byte));
    EXPECT_TRUE(seen.insert(code_point).second)
        << "code point used twice: U+" << std::hex << static_cast<std::uint32_t>(code_point);
    EXPECT_GT(code_point, U' ');  // never a control character or a space
    const std::optional<std::uint8_t> back = code_point_to_byte(code_point);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, byte);
  }
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(*seen.rbegin(), U'\u0143');  // the 68 shifted bytes end at U+0143 ('Ń')
}

TEST(ByteLevelTest, KnownSpellingsMatchGpt2) {
  EXPECT_EQ(byte_to_code_point('a'), U'a');
  EXPECT_EQ(byte_to_code_point('!'), U'!');
  EXPECT_EQ(byte_to_code_point(0xE9), U'\u00E9');  // Latin-1 bytes keep their code point
  EXPECT_EQ(byte_to_code_point(0x00), U'\u0100');  // 'Ā'
  EXPECT_EQ(byte_to_code_point(' '), U'\u0120');   // 'Ġ'
  EXPECT_EQ(byte_to_code_point('\n'), U'\u010A');  // 'Ċ'
  EXPECT_EQ(byte_to_code_point(0x7F), U'\u0121');  // 'ġ'
  EXPECT_EQ(byte_to_code_point(0xAD), U'\u0143');  // 'Ń', the soft hyphen
}

TEST(ByteLevelTest, CodePointsOutsideTheMapHaveNoByte) {
  EXPECT_FALSE(code_point_to_byte(U' ').has_value());
  EXPECT_FALSE(code_point_to_byte(U'\u0144').has_value());
  EXPECT_FALSE(code_point_to_byte(U'\u4E2D').has_value());
}

TEST(ByteLevelTest, StringsRoundTrip) {
  EXPECT_EQ(bytes_to_byte_level(" the\n"), "\u0120the\u010A");
  std::string all_bytes;
  for (int byte = 0; byte < 256; ++byte) all_bytes.push_back(static_cast<char>(byte));
  EXPECT_EQ(byte_level_to_bytes(bytes_to_byte_level(all_bytes)), all_bytes);
}

TEST(ByteLevelTest, TextThatIsNotByteLevelIsRejected) {
  EXPECT_FALSE(byte_level_to_bytes("a b").has_value());     // a raw space is not a byte-level character
  EXPECT_FALSE(byte_level_to_bytes("\u4E2D").has_value());  // nor is a CJK character
  EXPECT_FALSE(byte_level_to_bytes("\xC3").has_value());    // nor broken UTF-8
}

}  // namespace
}  // namespace minigen
