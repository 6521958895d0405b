// minigen's rendering against minimind-3's own template: tests/data/chat_template/minimind3_cases.json holds
// conversations and the text jinja2 rendered from minimind-3's chat_template for each
// (tools/chat_fixtures/render_fixtures.py, which also checks minigen's Jinja template against the same text).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/file_io.h"
#include "openai/chat_request.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer_test_fixture.h"

namespace minigen {
namespace {

using nlohmann::ordered_json;

std::vector<ordered_json> fixture_cases() {
  const std::string text =
      read_whole_file(MINIGEN_TEST_DATA_DIR "/chat_template/minimind3_cases.json", 1 << 20, "chat template fixtures");
  return ordered_json::parse(text)["cases"].get<std::vector<ordered_json>>();
}

ChatPromptOptions options_of(const ordered_json& fixture, const ChatConversation& conversation) {
  ChatPromptOptions options;
  options.tools = conversation.tools;
  options.add_generation_prompt = fixture["add_generation_prompt"].get<bool>();
  options.open_thinking = fixture["open_thinking"].get<bool>();
  return options;
}

TEST(ChatTemplateFixtures, EveryCaseRendersAsMiniMind3sTemplateByteForByte) {
  const std::vector<ordered_json> cases = fixture_cases();
  ASSERT_GE(cases.size(), 18u);
  for (const ordered_json& fixture : cases) {
    const ChatConversation conversation = chat_conversation_from_json(fixture["messages"], fixture["tools"]);
    EXPECT_EQ(render_chat(conversation.messages, options_of(fixture, conversation)),
              fixture["expected"].get<std::string>())
        << fixture["name"];
  }
}

// The ids follow the same text: nothing a fixture's request supplies spells an added token of the tiny tokenizer
// except the typed "<|im_end|>", which must stay plain text (one <|im_end|> token fewer than the text holds).
TEST(ChatTemplateFixtures, EncodedCasesMatchTheirTextExceptTypedMarkers) {
  const Tokenizer tokenizer = Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json());
  for (const ordered_json& fixture : fixture_cases()) {
    const ChatConversation conversation = chat_conversation_from_json(fixture["messages"], fixture["tools"]);
    const ChatPromptOptions options = options_of(fixture, conversation);
    const std::vector<int> ids = encode_chat(tokenizer, conversation.messages, options);
    EXPECT_EQ(tokenizer.decode(ids, /*skip_special_tokens=*/false), fixture["expected"].get<std::string>())
        << fixture["name"];
    if (fixture["name"] != "non_ascii_and_escapes") {
      EXPECT_EQ(ids, tokenizer.encode(fixture["expected"].get<std::string>())) << fixture["name"];
    } else {
      EXPECT_NE(ids, tokenizer.encode(fixture["expected"].get<std::string>()));
    }
  }
}

TEST(ChatTemplateFixtures, MiniMind3sThinkingFlagOpensTheThinkBlockOnlyInTheGenerationPrompt) {
  for (const ordered_json& fixture : fixture_cases()) {
    const std::string expected = fixture["expected"].get<std::string>();
    if (!fixture["add_generation_prompt"].get<bool>()) continue;
    const std::string_view ending = fixture["open_thinking"].get<bool>()
                                        ? "<|im_start|>assistant\n<think>\n"
                                        : "<|im_start|>assistant\n<think>\n\n</think>\n\n";
    EXPECT_TRUE(expected.ends_with(ending)) << fixture["name"];
  }
}

}  // namespace
}  // namespace minigen
