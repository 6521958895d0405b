#include "tokenizer/corpus_piece_counter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/error.h"

namespace minigen {
namespace {

TEST(CorpusPieceCounterTest, CountsPiecesAndSkipsAddedTokens) {
  CorpusPieceCounter counter;
  counter.add_text("the cat<|im_end|>the cat");
  const auto& counts = counter.counts();
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts.at("the"), 2);
  EXPECT_EQ(counts.at(" cat"), 2);
}

TEST(CorpusPieceCounterTest, FileCountsDoNotDependOnTheBlockSize) {
  // Whitespace runs, newlines after spaces and multi-byte characters near block edges are where a careless cut
  // would change the pieces.
  std::string text;
  for (int i = 0; i < 40; ++i) {
    text += "Line " + std::to_string(i) + ":  words \n\n\t indented 中文。\n \nend.\n";
  }
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("minigen_counter_test_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path, std::ios::binary) << text;

  CorpusPieceCounter whole;
  whole.add_text(text);
  for (const std::size_t block_bytes : {1u, 7u, 64u, 1000u, 1u << 20}) {
    CorpusPieceCounter from_file;
    from_file.add_file(path, block_bytes);
    EXPECT_EQ(from_file.counts(), whole.counts()) << "block size " << block_bytes;
  }
  std::filesystem::remove(path);
}

// Text is cut only before a newline that follows a visible ASCII character. A file without one (here 65 MiB of zeros,
// or /dev/zero, which is refused as not a regular file) would otherwise be held whole in memory.
TEST(CorpusPieceCounterTest, RefusesTextWithoutCutPointsBeyondTheLimitAndNonRegularFiles) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("minigen_counter_zeros_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path).close();
  std::filesystem::resize_file(path, CorpusPieceCounter::kMaxUncutBytes + (1 << 20));
  CorpusPieceCounter counter;
  try {
    counter.add_file(path);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), path.string() +
                                             ": more than 64 MiB without a line break after a visible "
                                             "ASCII character; the trainer reads text in lines");
  }
  std::filesystem::remove(path);
  EXPECT_THROW(counter.add_file("/dev/zero"), Error);
}

}  // namespace
}  // namespace minigen
