#include "tokenizer/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "tokenizer/tokenizer_test_fixture.h"

namespace minigen {
namespace {

using tokenizer_testing::tiny_byte_id;
using Ids = std::vector<int>;

Tokenizer tiny_tokenizer() { return Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json()); }

TEST(BpeTokenizerTest, AppliesMergesToWholeWords) {
  const Tokenizer tokenizer = tiny_tokenizer();
  EXPECT_EQ(tokenizer.vocab_size(), tokenizer_testing::kTinyVocabSize);
  // "hello": he (rank 0), ll (1), hell (2), hello (3). " world": Ġw (4), or (5), Ġwor (6), ld (7), Ġworld (8).
  EXPECT_EQ(tokenizer.encode("hello world"), (Ids{tokenizer_testing::kTinyHello, tokenizer_testing::kTinySpaceWorld}));
  EXPECT_EQ(tokenizer.encode("hell"), (Ids{tokenizer_testing::kTinyHell}));
  EXPECT_EQ(tokenizer.encode("helo"), (Ids{tokenizer_testing::kTinyHe, tiny_byte_id('l'), tiny_byte_id('o')}));
}

TEST(BpeTokenizerTest, LowerRankWinsOverLeftmostPosition) {
  const Tokenizer tokenizer = tiny_tokenizer();
  // In "wor" both (w,o) rank 9 and (o,r) rank 5 apply; (o,r) is merged first, which leaves no (w,o).
  EXPECT_EQ(tokenizer.encode("wor"), (Ids{tiny_byte_id('w'), tokenizer_testing::kTinyOr}));
  EXPECT_EQ(tokenizer.encode("wo"), (Ids{tokenizer_testing::kTinyWo}));
}

TEST(BpeTokenizerTest, MergesDoNotCrossPieces) {
  const Tokenizer tokenizer = tiny_tokenizer();
  // "he" and "llo" are separate pieces ("he", "!", "llo"), so no "hello" token can form.
  EXPECT_EQ(tokenizer.encode("he!llo"),
            (Ids{tokenizer_testing::kTinyHe, tiny_byte_id('!'), tokenizer_testing::kTinyLl, tiny_byte_id('o')}));
}

TEST(BpeTokenizerTest, AddedTokensAreMatchedWholeAndLongestFirst) {
  const Tokenizer tokenizer = tiny_tokenizer();
  EXPECT_EQ(tokenizer.encode("<|im_start|>hello<|im_end|>"), (Ids{1, tokenizer_testing::kTinyHello, 2}));
  // "<think>!" is longer than "<think>", so it wins where both match.
  EXPECT_EQ(tokenizer.encode("<think>!<think>"), (Ids{4, 3}));
  // Added tokens are found anywhere, even glued to words; an incomplete one is ordinary text.
  EXPECT_EQ(tokenizer.encode("hello<|endoftext|>"), (Ids{tokenizer_testing::kTinyHello, 0}));
  EXPECT_EQ(tokenizer.encode("<|im_"),
            (Ids{tiny_byte_id('<'), tiny_byte_id('|'), tiny_byte_id('i'), tiny_byte_id('m'), tiny_byte_id('_')}));
}

TEST(BpeTokenizerTest, DecodeSkipsOnlySpecialTokensWhenAsked) {
  const Tokenizer tokenizer = tiny_tokenizer();
  const Ids ids = tokenizer.encode("<|im_start|>hello<think> world<|im_end|>");
  EXPECT_EQ(tokenizer.decode(ids, false), "<|im_start|>hello<think> world<|im_end|>");
  EXPECT_EQ(tokenizer.decode(ids, true), "hello<think> world");  // <think> is an added token but not special
}

TEST(BpeTokenizerTest, RoundTripsAnyBytes) {
  const Tokenizer tokenizer = tiny_tokenizer();
  for (const std::string& text : std::vector<std::string>{
           "hello world", "你好，世界", "emoji 😀👍🏽 mix", "<|im_start|>user\nhi<|im_end|>\n",
           "\xFF\xFE bad \xC3", "tabs\tand\r\nnewlines  \n\n", std::string("nul\0byte", 8), ""}) {
    EXPECT_EQ(tokenizer.decode(tokenizer.encode(text), false), text);
  }
}

TEST(BpeTokenizerTest, TokenBytesAndSpecialFlags) {
  const Tokenizer tokenizer = tiny_tokenizer();
  EXPECT_EQ(tokenizer.token_bytes(tokenizer_testing::kTinySpaceWorld), " world");
  EXPECT_EQ(tokenizer.token_bytes(tiny_byte_id('\n')), "\n");
  EXPECT_EQ(tokenizer.token_bytes(1), "<|im_start|>");
  EXPECT_TRUE(tokenizer.is_special(0));
  EXPECT_TRUE(tokenizer.is_special(2));
  EXPECT_FALSE(tokenizer.is_special(3));
  EXPECT_FALSE(tokenizer.is_special(tokenizer_testing::kTinyHello));
}

TEST(BpeTokenizerTest, FindTokenLooksUpRawText) {
  const Tokenizer tokenizer = tiny_tokenizer();
  EXPECT_EQ(tokenizer.find_token(" world"), tokenizer_testing::kTinySpaceWorld);
  EXPECT_EQ(tokenizer.find_token("<think>"), 3);
  EXPECT_EQ(tokenizer.find_token(std::string(1, '\xF0')), tiny_byte_id(0xF0));
  EXPECT_FALSE(tokenizer.find_token("Ġworld").has_value());  // the byte-level spelling is not the text
  EXPECT_FALSE(tokenizer.find_token("nothing").has_value());
}

TEST(BpeTokenizerTest, RolesDefaultToMinimindNamesWithoutConfig) {
  const Tokenizer tokenizer = tiny_tokenizer();
  EXPECT_EQ(tokenizer.bos_id(), 1);
  EXPECT_EQ(tokenizer.eos_id(), 2);
  EXPECT_EQ(tokenizer.pad_id(), 0);
  EXPECT_EQ(tokenizer.chat_template(), "");
}

TEST(BpeTokenizerTest, OutOfRangeIdsThrow) {
  const Tokenizer tokenizer = tiny_tokenizer();
  EXPECT_THROW(tokenizer.token_bytes(-1), Error);
  EXPECT_THROW(tokenizer.token_bytes(tokenizer_testing::kTinyVocabSize), Error);
  EXPECT_THROW(tokenizer.is_special(tokenizer_testing::kTinyVocabSize), Error);
  const Ids bad = {tokenizer_testing::kTinyHello, 100000};
  EXPECT_THROW(tokenizer.decode(bad, false), Error);
}

TEST(BpeTokenizerTest, LongWhitespaceRunEncodesToByteTokens) {
  // One piece of 100000 spaces: the tiny vocabulary has no space merges, so one id per byte, computed without
  // quadratic work.
  const Tokenizer tokenizer = tiny_tokenizer();
  const Ids ids = tokenizer.encode(std::string(100000, ' '));
  ASSERT_EQ(ids.size(), 100000u);
  EXPECT_EQ(ids.front(), tiny_byte_id(' '));
  EXPECT_EQ(ids.back(), tiny_byte_id(' '));
}

TEST(BpeTokenizerTest, RepeatedEncodingGivesTheSameIds) {
  // The second call is served from the piece cache and must agree with the first.
  const Tokenizer tokenizer = tiny_tokenizer();
  const Ids first = tokenizer.encode("hello world hello world");
  EXPECT_EQ(first, tokenizer.encode("hello world hello world"));
  // " hello" becomes Ġ + hello: the tiny vocabulary has no merge that joins the space to "hello".
  EXPECT_EQ(first, (Ids{tokenizer_testing::kTinyHello, tokenizer_testing::kTinySpaceWorld, tiny_byte_id(' '),
                        tokenizer_testing::kTinyHello, tokenizer_testing::kTinySpaceWorld}));
}

// The project's own tokenizer (tokenizers/minigen-6400, trained by `minigen tokenizer train` on the corpus of
// tools/corpus: KJV, WordNet, dictionaries, fortunes, Tang/Song poems). The expected ids are the ones
// tools/train/bpe.py, an independent Python implementation, produced for the same file.
TEST(ShippedTokenizerTest, EncodesLikeTheIndependentPythonTokenizer) {
  // lexically_normal: tests/data need not exist for the path to resolve.
  const std::filesystem::path directory =
      (std::filesystem::path(MINIGEN_TEST_DATA_DIR) / "../../tokenizers/minigen-6400").lexically_normal();
  const Tokenizer tokenizer = Tokenizer::from_files(directory / "tokenizer.json", directory / "tokenizer_config.json");
  EXPECT_EQ(tokenizer.vocab_size(), 6400);
  EXPECT_EQ(tokenizer.bos_id(), 1);
  EXPECT_EQ(tokenizer.eos_id(), 2);
  EXPECT_EQ(tokenizer.pad_id(), 0);
  // tests/data/tokenizer/minigen-6400.json: `python3 tools/train/bpe.py --fixture …` regenerates it. English, a
  // ChatML turn (added tokens whole), Tang poetry — common characters (前 明 月 是 地 上) one token each, rarer ones
  // (床 光 霜) two pieces, 疑 three — and an emoji in byte tokens.
  std::ifstream fixture_file(std::string(MINIGEN_TEST_DATA_DIR) + "/tokenizer/minigen-6400.json");
  ASSERT_TRUE(fixture_file) << "missing tests/data/tokenizer/minigen-6400.json";
  const nlohmann::json fixture = nlohmann::json::parse(fixture_file);
  ASSERT_EQ(fixture["encodings"].size(), 4u);
  for (const nlohmann::json& entry : fixture["encodings"]) {
    const std::string text = entry["text"];
    EXPECT_EQ(tokenizer.encode(text), entry["ids"].get<Ids>()) << text;
  }
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("光 😀"), false), "光 😀");
}

}  // namespace
}  // namespace minigen
