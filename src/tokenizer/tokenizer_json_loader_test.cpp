// Loading tokenizer.json / tokenizer_config.json, and refusing malformed or unsupported files with a clear message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "core/error.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_test_fixture.h"

namespace minigen {
namespace {

using nlohmann::json;

// Runs `load` and checks that it throws minigen::Error whose message contains `expected`.
void expect_load_error(const std::function<void()>& load, const std::string& expected) {
  try {
    load();
    ADD_FAILURE() << "expected an Error containing \"" << expected << "\"";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << "message was: " << error.what();
  }
}

void expect_tokenizer_json_error(const json& tokenizer_json, const std::string& expected) {
  expect_load_error([&] { Tokenizer::from_json_text(tokenizer_json.dump()); }, expected);
}

TEST(TokenizerJsonLoaderTest, BothMergeSpellingsGiveTheSameTokenizer) {
  const Tokenizer from_arrays = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json(false));
  const Tokenizer from_strings = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json(true));
  for (const char* text : {"hello world", "wor", "he!llo"}) {
    EXPECT_EQ(from_arrays.encode(text), from_strings.encode(text)) << text;
  }
  EXPECT_EQ(from_strings.encode("hello world"),
            (std::vector<int>{tokenizer_testing::kTinyHello, tokenizer_testing::kTinySpaceWorld}));
}

TEST(TokenizerJsonLoaderTest, RejectsTextThatIsNotJson) {
  expect_load_error([] { Tokenizer::from_json_text("{\"model\": "); }, "tokenizer.json is not valid JSON");
}

TEST(TokenizerJsonLoaderTest, RejectsMissingSections) {
  json no_model = tokenizer_testing::tiny_tokenizer_json_value();
  no_model.erase("model");
  expect_tokenizer_json_error(no_model, "missing the model section");

  json no_vocab = tokenizer_testing::tiny_tokenizer_json_value();
  no_vocab["model"].erase("vocab");
  expect_tokenizer_json_error(no_vocab, "missing the vocabulary (model.vocab)");

  json no_merges = tokenizer_testing::tiny_tokenizer_json_value();
  no_merges["model"].erase("merges");
  expect_tokenizer_json_error(no_merges, "missing the merge list (model.merges)");
}

TEST(TokenizerJsonLoaderTest, RejectsMergesNamingUnknownTokens) {
  json unknown_part = tokenizer_testing::tiny_tokenizer_json_value();
  unknown_part["model"]["merges"].push_back({"zz", "q"});
  expect_tokenizer_json_error(unknown_part, "merge #10 ([\"zz\",\"q\"]) uses \"zz\", which is not in model.vocab");

  json unknown_result = tokenizer_testing::tiny_tokenizer_json_value();
  unknown_result["model"]["merges"].push_back({"x", "y"});  // both bytes exist, "xy" does not
  expect_tokenizer_json_error(unknown_result, "uses \"xy\", which is not in model.vocab");

  json malformed = tokenizer_testing::tiny_tokenizer_json_value();
  malformed["model"]["merges"].push_back("a b c");
  expect_tokenizer_json_error(malformed, "is not two tokens separated by one space");
}

TEST(TokenizerJsonLoaderTest, RejectsUnsupportedPipelines) {
  json word_piece = tokenizer_testing::tiny_tokenizer_json_value();
  word_piece["model"]["type"] = "WordPiece";
  expect_tokenizer_json_error(word_piece, "model type \"WordPiece\" is not supported");

  json normalizer = tokenizer_testing::tiny_tokenizer_json_value();
  normalizer["normalizer"] = {{"type", "NFC"}};
  expect_tokenizer_json_error(normalizer, "a normalizer is not supported");

  json no_pre_tokenizer = tokenizer_testing::tiny_tokenizer_json_value();
  no_pre_tokenizer["pre_tokenizer"] = nullptr;
  expect_tokenizer_json_error(no_pre_tokenizer, "the pre_tokenizer must be ByteLevel");

  json prefix_space = tokenizer_testing::tiny_tokenizer_json_value();
  prefix_space["pre_tokenizer"]["add_prefix_space"] = true;
  expect_tokenizer_json_error(prefix_space, "add_prefix_space true is not supported");

  json lstrip = tokenizer_testing::tiny_tokenizer_json_value();
  lstrip["added_tokens"][3]["lstrip"] = true;
  expect_tokenizer_json_error(lstrip, "added token \"<think>\" sets \"lstrip\"");
}

TEST(TokenizerJsonLoaderTest, RejectsBadVocabularies) {
  json missing_byte = tokenizer_testing::tiny_tokenizer_json_value();
  missing_byte["model"]["vocab"].erase("\u0100");  // byte 0x00; no merge uses it
  expect_tokenizer_json_error(missing_byte, "model.vocab lacks the symbol for byte 0x00");

  json negative_id = tokenizer_testing::tiny_tokenizer_json_value();
  negative_id["model"]["vocab"]["extra"] = -3;
  expect_tokenizer_json_error(negative_id, "vocabulary entry \"extra\" has an id out of range: -3");

  json not_byte_level = tokenizer_testing::tiny_tokenizer_json_value();
  not_byte_level["model"]["vocab"]["two words"] = 500;
  expect_tokenizer_json_error(not_byte_level, "vocabulary entry \"two words\" is not a byte-level");
}

// Found by fuzz_tokenizer_json: an added token at the id of a byte token ("!" and "<tts_text_bos>" both 36) was
// accepted, so "!" encoded to 36 and decoded as "<tts_text_bos>". One id must mean one text.
TEST(TokenizerJsonLoaderTest, RefusesTwoTextsForOneId) {
  std::ifstream regression(std::filesystem::path(MINIGEN_SOURCE_DIR) / "fuzz" / "corpus" / "fuzz_tokenizer_json" /
                               "regression-added-token-takes-a-vocab-id",
                           std::ios::binary);
  const std::string input((std::istreambuf_iterator<char>(regression)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(input.empty());
  expect_load_error([&] { Tokenizer::from_json_text(input.substr(0, input.find('\0'))); },
                    "added token \"<tts_text_bos>\" has id 36, which model.vocab gives to \"!\"");

  json takes_a_byte = tokenizer_testing::tiny_tokenizer_json_value();
  takes_a_byte["added_tokens"][3]["id"] = tokenizer_testing::tiny_byte_id('!');
  expect_tokenizer_json_error(takes_a_byte, "added token \"<think>\" has id 38, which model.vocab gives to \"!\"");

  json two_added = tokenizer_testing::tiny_tokenizer_json_value();
  two_added["added_tokens"][4]["id"] = 3;
  two_added["model"]["vocab"].erase("<think>!");
  expect_tokenizer_json_error(two_added, "id 3 is given to two added tokens, \"<think>\" and \"<think>!\"");

  // The usual layout, each added token also in model.vocab under its own spelling, loads.
  const Tokenizer usual = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json(false));
  EXPECT_EQ(usual.decode(usual.encode("hello!<think>"), false), "hello!<think>");
}

TEST(TokenizerJsonLoaderTest, GapsInTheIdsAreUnusedIds) {
  json gap = tokenizer_testing::tiny_tokenizer_json_value();
  gap["model"]["vocab"]["Ġhello"] = tokenizer_testing::kTinyVocabSize + 4;  // ids 271..274 unused
  const Tokenizer tokenizer = Tokenizer::from_json_text(gap.dump());
  EXPECT_EQ(tokenizer.vocab_size(), tokenizer_testing::kTinyVocabSize + 5);
  EXPECT_EQ(tokenizer.token_bytes(tokenizer_testing::kTinyVocabSize + 4), " hello");
  expect_load_error([&] { tokenizer.token_bytes(tokenizer_testing::kTinyVocabSize + 1); }, "is not in the vocabulary");
}

TEST(TokenizerJsonLoaderTest, ConfigNamesRolesAndCarriesTheChatTemplate) {
  const json config = {{"bos_token", "<|endoftext|>"},
                       {"eos_token", {{"content", "<think>"}, {"lstrip", false}}},  // older HF object form
                       {"pad_token", nullptr},
                       {"chat_template", "{{ messages }}"}};
  const Tokenizer tokenizer = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json(), config.dump());
  EXPECT_EQ(tokenizer.bos_id(), 0);
  EXPECT_EQ(tokenizer.eos_id(), 3);
  EXPECT_EQ(tokenizer.pad_id(), 0);  // null falls back to minimind's <|endoftext|>
  EXPECT_EQ(tokenizer.chat_template(), "{{ messages }}");
}

TEST(TokenizerJsonLoaderTest, ConfigWithNamedTemplatesPicksDefault) {
  const json config = {{"chat_template", json::array({{{"name", "tool_use"}, {"template", "tools"}},
                                                      {{"name", "default"}, {"template", "chat"}}})}};
  const Tokenizer tokenizer = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json(), config.dump());
  EXPECT_EQ(tokenizer.chat_template(), "chat");
}

TEST(TokenizerJsonLoaderTest, ConfigNamingAnUnknownTokenIsAnError) {
  const json config = {{"bos_token", "<s>"}};
  expect_load_error([&] { Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json(), config.dump()); },
                    "tokenizer_config.json: bos_token \"<s>\" is not a token of tokenizer.json");
}

TEST(TokenizerJsonLoaderTest, MissingRoleThrowsOnlyWhenAsked) {
  json no_eos = tokenizer_testing::tiny_tokenizer_json_value();
  no_eos["added_tokens"].erase(2);
  no_eos["model"]["vocab"].erase("<|im_end|>");
  const Tokenizer tokenizer = Tokenizer::from_json_text(no_eos.dump());
  EXPECT_EQ(tokenizer.bos_id(), 1);
  expect_load_error([&] { tokenizer.eos_id(); }, "this tokenizer has no eos token");
}

TEST(TokenizerJsonLoaderTest, FromFilesReadsBothFilesAndNamesMissingOnes) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("minigen_loader_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "tokenizer.json") << tokenizer_testing::tiny_tokenizer_json();
  std::ofstream(directory / "tokenizer_config.json") << json{{"eos_token", "<|endoftext|>"}}.dump();
  const Tokenizer tokenizer = Tokenizer::from_files(directory / "tokenizer.json", directory / "tokenizer_config.json");
  EXPECT_EQ(tokenizer.eos_id(), 0);
  EXPECT_EQ(tokenizer.encode("hello"), (std::vector<int>{tokenizer_testing::kTinyHello}));

  expect_load_error([&] { Tokenizer::from_files(directory / "absent.json"); }, "absent.json");
  std::ofstream(directory / "broken.json") << "{";
  expect_load_error([&] { Tokenizer::from_files(directory / "broken.json"); }, "broken.json is not valid JSON");
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace minigen
