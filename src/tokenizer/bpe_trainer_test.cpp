#include "tokenizer/bpe_trainer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace minigen {
namespace {

using Merges = std::vector<std::pair<std::string, std::string>>;

// Worked by hand. "aaab aab ab" pre-tokenizes to "aaab", " aab", " ab", each once:
//   symbols  a a a b | ␠ a a b | ␠ a b
//   pairs    (a,a) 2+1 = 3, (a,b) 1+1+1 = 3, (␠,a) 2
// 1. (a,a) and (a,b) tie at 3; the left tokens are both "a", and right "a" < "b": merge a+a → "aa" (id 292).
//      aa a b | ␠ aa b | ␠ a b     pairs (a,b) 2, (aa,a) 1, (␠,aa) 1, (aa,b) 1, (␠,a) 1
// 2. (a,b) has 2: merge → "ab" (id 293).
//      aa ab | ␠ aa b | ␠ ab      pairs (aa,ab) 1, (␠,aa) 1, (aa,b) 1, (␠,ab) 1
// 3. All tie at 1; the smallest left token by bytes is " " (0x20 < 'a'), then right "aa" < "ab": merge ␠+aa → " aa".
// With min_frequency 2 training stops after step 2, where no pair is left twice.
TEST(BpeTrainerTest, HandComputedMergesOnATinyCorpus) {
  const std::vector<std::string> corpus = {"aaab aab ab"};
  BpeTrainOptions options;
  options.vocab_size = 295;
  options.min_frequency = 1;
  std::vector<std::pair<int, int>> progress_calls;
  options.progress = [&](int done, int total) { progress_calls.emplace_back(done, total); };

  const TrainedBpe trained = train_bpe_on_texts(corpus, options);
  EXPECT_EQ(trained.merges, (Merges{{"a", "a"}, {"a", "b"}, {"\u0120", "aa"}}));
  ASSERT_EQ(trained.vocab.size(), 295u);
  EXPECT_EQ(trained.vocab[292], "aa");
  EXPECT_EQ(trained.vocab[293], "ab");
  EXPECT_EQ(trained.vocab[294], "\u0120aa");  // " aa" in byte-level spelling
  EXPECT_EQ(progress_calls, (std::vector<std::pair<int, int>>{{1, 3}, {2, 3}, {3, 3}}));

  options.min_frequency = 2;
  const TrainedBpe frequent_only = train_bpe_on_texts(corpus, options);
  EXPECT_EQ(frequent_only.merges, (Merges{{"a", "a"}, {"a", "b"}}));
  EXPECT_EQ(frequent_only.vocab.size(), 294u);
}

TEST(BpeTrainerTest, VocabularyStartsWithMinimindLayout) {
  const std::vector<std::string> corpus = {"x"};
  BpeTrainOptions options;
  options.vocab_size = 300;
  const TrainedBpe trained = train_bpe_on_texts(corpus, options);
  ASSERT_EQ(trained.vocab.size(), 292u);  // nothing to merge in "x"
  EXPECT_EQ(trained.vocab[0], "<|endoftext|>");
  EXPECT_EQ(trained.vocab[1], "<|im_start|>");
  EXPECT_EQ(trained.vocab[2], "<|im_end|>");
  EXPECT_EQ(trained.vocab[20], "<tts_text_bos_single>");
  EXPECT_EQ(trained.vocab[21], "<tool_call>");
  EXPECT_EQ(trained.vocab[35], "<|buffer9|>");
  // Byte symbols in the order of their spelling's code point, exactly as in minimind-3's tokenizer.json.
  EXPECT_EQ(trained.vocab[36], "!");
  EXPECT_EQ(trained.vocab[100], "a");
  EXPECT_EQ(trained.vocab[224], "\u0100");  // byte 0x00
  EXPECT_EQ(trained.vocab[256], "\u0120");  // space
  EXPECT_EQ(trained.vocab[291], "\u0143");  // byte 0xAD
}

TEST(BpeTrainerTest, AddedTokensInTheCorpusAreNotLearned) {
  // Without cutting the added tokens out, "<|", "im", "_", ... would be counted too.
  const std::vector<std::string> corpus = {"<|im_start|>ab<|im_end|>ab<|im_start|>"};
  BpeTrainOptions options;
  options.vocab_size = 400;
  EXPECT_EQ(train_bpe_on_texts(corpus, options).merges, (Merges{{"a", "b"}}));
}

TEST(BpeTrainerTest, CountsAreSummedAcrossDocumentsAndRepeats) {
  // "ab" occurs 3 times, "cd" twice: (a,b) is merged first although "cd" sorts later either way.
  const std::vector<std::string> corpus = {"cd ab", "ab", "cd\nab"};
  BpeTrainOptions options;
  options.vocab_size = 294;
  const TrainedBpe trained = train_bpe_on_texts(corpus, options);
  // Pieces: "cd" 2, " ab" 1, "ab" 2, "\n" 1. Pairs: (c,d) 2, (a,b) 3, (␠,a) 1 → ab, then (c,d) → cd.
  EXPECT_EQ(trained.merges, (Merges{{"a", "b"}, {"c", "d"}}));
}

TEST(BpeTrainerTest, TooSmallVocabularyIsAnError) {
  const std::vector<std::string> corpus = {"abc"};
  BpeTrainOptions options;
  options.vocab_size = 291;
  try {
    train_bpe_on_texts(corpus, options);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "vocab_size 291 is too small: the 36 added tokens and 256 byte symbols take 292 ids");
  }
}

TEST(BpeTrainerTest, UnreadableFileIsAnError) {
  const std::vector<std::filesystem::path> files = {"/nonexistent/minigen/corpus.txt"};
  EXPECT_THROW(train_bpe(files, BpeTrainOptions{}), Error);
}

}  // namespace
}  // namespace minigen
