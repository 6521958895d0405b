#include "tokenizer/stream_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "tokenizer/tokenizer_test_fixture.h"

namespace minigen {
namespace {

using tokenizer_testing::tiny_byte_id;

class StreamDecoderTest : public ::testing::Test {
 protected:
  // What push() returned for each id, in order.
  std::vector<std::string> push_all(StreamDecoder& decoder, const std::vector<int>& ids) {
    std::vector<std::string> outputs;
    for (const int id : ids) outputs.push_back(decoder.push(id));
    return outputs;
  }

  Tokenizer tokenizer_ = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json());
};

TEST_F(StreamDecoderTest, HoldsAFourByteEmojiUntilItsLastByteArrives) {
  // The tiny vocabulary has no merges for the emoji, so "a😀b" is a, F0, 9F, 98, 80, b: one token per byte.
  const std::vector<int> ids = tokenizer_.encode(std::string("a\xF0\x9F\x98\x80") + "b");
  ASSERT_EQ(ids, (std::vector<int>{tiny_byte_id('a'), tiny_byte_id(0xF0), tiny_byte_id(0x9F), tiny_byte_id(0x98),
                                   tiny_byte_id(0x80), tiny_byte_id('b')}));
  StreamDecoder decoder(tokenizer_);
  EXPECT_EQ(push_all(decoder, ids), (std::vector<std::string>{"a", "", "", "", "\xF0\x9F\x98\x80", "b"}));
  EXPECT_EQ(decoder.finish(), "");
}

TEST_F(StreamDecoderTest, MultiTokenWordsComeOutWhole) {
  StreamDecoder decoder(tokenizer_);
  EXPECT_EQ(push_all(decoder, tokenizer_.encode("hello world")), (std::vector<std::string>{"hello", " world"}));
}

TEST_F(StreamDecoderTest, FinishReplacesAnUnfinishedCharacter) {
  StreamDecoder decoder(tokenizer_);
  EXPECT_EQ(decoder.push(tiny_byte_id(0xF0)), "");
  EXPECT_EQ(decoder.push(tiny_byte_id(0x9F)), "");
  EXPECT_EQ(decoder.finish(), "\uFFFD");
  // The decoder is empty again and can start a new stream.
  EXPECT_EQ(decoder.push(tiny_byte_id('x')), "x");
}

TEST_F(StreamDecoderTest, BytesThatCanNeverFormACharacterAreReplacedAtOnce) {
  StreamDecoder decoder(tokenizer_);
  EXPECT_EQ(decoder.push(tiny_byte_id(0xFF)), "\uFFFD");
  EXPECT_EQ(decoder.push(tiny_byte_id(0xE4)), "");        // could start 中 ...
  EXPECT_EQ(decoder.push(tiny_byte_id('a')), "\uFFFDa");  // ... but 'a' cannot continue it
}

TEST_F(StreamDecoderTest, SpecialTokensAreKeptOrSkipped) {
  StreamDecoder keeping(tokenizer_);
  EXPECT_EQ(keeping.push(1), "<|im_start|>");
  EXPECT_EQ(keeping.push(3), "<think>");

  StreamDecoder skipping(tokenizer_, /*skip_special_tokens=*/true);
  EXPECT_EQ(skipping.push(tiny_byte_id(0xC3)), "");
  EXPECT_EQ(skipping.push(2), "");                           // skipped, and the held byte keeps waiting
  EXPECT_EQ(skipping.push(tiny_byte_id(0xA9)), "\xC3\xA9");  // é
  EXPECT_EQ(skipping.push(3), "<think>");                    // added but not special: kept
}

TEST_F(StreamDecoderTest, UnknownIdThrows) {
  StreamDecoder decoder(tokenizer_);
  EXPECT_THROW(decoder.push(tokenizer_testing::kTinyVocabSize), Error);
}

}  // namespace
}  // namespace minigen
