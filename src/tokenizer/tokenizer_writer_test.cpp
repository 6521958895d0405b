#include "tokenizer/tokenizer_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

class TokenizerWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("minigen_writer_test_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  static TrainedBpe train_small(int vocab_size) {
    const std::vector<std::string> corpus = {
        "In the beginning God created the heaven and the earth. And the earth was without form, and void; and "
        "darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters.",
        "起初，神创造天地。地是空虚混沌，渊面黑暗；神的灵运行在水面上。神说：要有光，就有了光。",
        "Smile 😀 smile 😀 smile 😀 and then smile again 😀."};
    BpeTrainOptions options;
    options.vocab_size = vocab_size;
    return train_bpe_on_texts(corpus, options);
  }

  std::filesystem::path directory_;
};

TEST_F(TokenizerWriterTest, WrittenFilesLoadIntoAWorkingTokenizerOfTheAskedSize) {
  const TrainedBpe trained = train_small(330);
  ASSERT_EQ(trained.vocab.size(), 330u);
  write_tokenizer_files(trained, directory_);

  const Tokenizer tokenizer =
      Tokenizer::from_files(directory_ / "tokenizer.json", directory_ / "tokenizer_config.json");
  EXPECT_EQ(tokenizer.vocab_size(), 330);
  EXPECT_EQ(tokenizer.bos_id(), 1);
  EXPECT_EQ(tokenizer.eos_id(), 2);
  EXPECT_EQ(tokenizer.pad_id(), 0);
  EXPECT_TRUE(tokenizer.is_special(20));
  EXPECT_FALSE(tokenizer.is_special(25));  // <think>
  EXPECT_EQ(tokenizer.chat_template(), chatml_jinja_template());
  // Counted by hand: "th" occurs 13 times (9 × " the", 2 × "earth", "without", " then"), more than any other pair,
  // so it is token 292; then " th" (10) and " the" (10).
  EXPECT_EQ(trained.merges.front(), (std::pair<std::string, std::string>{"t", "h"}));
  EXPECT_EQ(tokenizer.token_bytes(292), "th");
  EXPECT_EQ(tokenizer.token_bytes(294), " the");
  EXPECT_EQ(tokenizer.encode(" the"), (std::vector<int>{294}));

  for (const std::string text : {"In the beginning God created the heaven and the earth.", "起初，神创造天地。",
                                 "Smile 😀!", "<|im_start|>user\nhi<|im_end|>\n", "bytes \xFF\xC3 end"}) {
    const std::vector<int> ids = tokenizer.encode(text);
    EXPECT_EQ(tokenizer.decode(ids, false), text);
  }
  EXPECT_LT(tokenizer.encode("the earth and the heaven").size(), std::string("the earth and the heaven").size());
}

TEST_F(TokenizerWriterTest, FilesHaveTheStandardHuggingFaceFields) {
  write_tokenizer_files(train_small(300), directory_);
  const nlohmann::json tokenizer =
      nlohmann::json::parse(read_whole_file(directory_ / "tokenizer.json", kMaxTokenizerFileBytes, "tokenizer.json"));
  EXPECT_EQ(tokenizer["version"], "1.0");
  EXPECT_TRUE(tokenizer["truncation"].is_null());
  EXPECT_TRUE(tokenizer["padding"].is_null());
  EXPECT_TRUE(tokenizer["normalizer"].is_null());
  EXPECT_TRUE(tokenizer["post_processor"].is_null());
  EXPECT_EQ(tokenizer["pre_tokenizer"],
            (nlohmann::json{
                {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}));
  EXPECT_EQ(tokenizer["decoder"]["type"], "ByteLevel");
  const nlohmann::json& model = tokenizer["model"];
  EXPECT_EQ(model["type"], "BPE");
  EXPECT_TRUE(model["dropout"].is_null());
  EXPECT_TRUE(model["unk_token"].is_null());
  EXPECT_EQ(model["fuse_unk"], false);
  EXPECT_EQ(model["byte_fallback"], false);
  EXPECT_EQ(model["vocab"].size(), 300u);
  EXPECT_EQ(model["merges"].size(), 8u);
  EXPECT_EQ(model["merges"][0], (nlohmann::json{"t", "h"}));
  EXPECT_EQ(model["merges"][2], (nlohmann::json{"\u0120th", "e"}));
  EXPECT_EQ(model["vocab"]["\u0120the"], 294);
  ASSERT_EQ(tokenizer["added_tokens"].size(), 36u);
  EXPECT_EQ(tokenizer["added_tokens"][2], (nlohmann::json{{"id", 2},
                                                          {"content", "<|im_end|>"},
                                                          {"single_word", false},
                                                          {"lstrip", false},
                                                          {"rstrip", false},
                                                          {"normalized", false},
                                                          {"special", true}}));
  EXPECT_EQ(tokenizer["added_tokens"][26]["content"], "</think>");
  EXPECT_EQ(tokenizer["added_tokens"][26]["special"], false);

  const nlohmann::json config = nlohmann::json::parse(
      read_whole_file(directory_ / "tokenizer_config.json", kMaxConfigFileBytes, "tokenizer_config.json"));
  EXPECT_EQ(config["bos_token"], "<|im_start|>");
  EXPECT_EQ(config["eos_token"], "<|im_end|>");
  EXPECT_EQ(config["pad_token"], "<|endoftext|>");
  EXPECT_EQ(config["unk_token"], "<|endoftext|>");
  EXPECT_EQ(config["model_max_length"], 32768);
  EXPECT_EQ(config["tokenizer_class"], "PreTrainedTokenizerFast");
  EXPECT_EQ(config["added_tokens_decoder"].size(), 36u);
  EXPECT_EQ(config["additional_special_tokens"].size(), 20u);  // the 21 specials minus <|endoftext|>

  // Only the two files: no temporary left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory_)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 2);
}

TEST_F(TokenizerWriterTest, VocabularyWithoutMinimindLayoutIsRefusedBeforeAnythingIsWritten) {
  TrainedBpe trained = train_small(300);
  trained.vocab[1] = "<s>";
  EXPECT_THROW(write_tokenizer_files(trained, directory_), Error);
  EXPECT_FALSE(std::filesystem::exists(directory_ / "tokenizer.json"));
  EXPECT_FALSE(std::filesystem::exists(directory_ / "tokenizer_config.json"));
}

}  // namespace
}  // namespace minigen
