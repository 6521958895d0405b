#include "request/chat_turn.h"

#include <gtest/gtest.h>

#include "request/request_error.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer_test_fixture.h"

namespace minigen {
namespace {

using nlohmann::ordered_json;

Tokenizer tiny_tokenizer() { return Tokenizer::from_json_text(tokenizer_testing::tiny_tokenizer_json()); }

std::string rendered(const Tokenizer& tokenizer, const ChatTurn& turn) {
  return tokenizer.decode(encode_chat_turn(tokenizer, turn), /*skip_special_tokens=*/false);
}

TEST(ChatTurn, ASystemMessageComesFirstOnlyWhenGiven) {
  const Tokenizer tokenizer = tiny_tokenizer();
  const std::vector<ChatMessage> both = {{"system", "be brief"}, {"user", "hello"}};
  const std::vector<ChatMessage> user = {{"user", "hello"}};
  EXPECT_EQ(rendered(tokenizer, {"be brief", "hello"}), render_chat(both, ChatPromptOptions{}));
  EXPECT_EQ(rendered(tokenizer, {"", "hello"}), render_chat(user, ChatPromptOptions{}));
  EXPECT_NE(rendered(tokenizer, {"", "hello"}).find("<|im_start|>user\nhello<|im_end|>"), std::string::npos);
}

TEST(ChatTurn, ThinkingOpensTheThinkBlock) {
  const Tokenizer tokenizer = tiny_tokenizer();
  const std::string open = rendered(tokenizer, {"", "hello", /*thinking=*/true});
  const std::string closed = rendered(tokenizer, {"", "hello", /*thinking=*/false});
  EXPECT_TRUE(open.ends_with("<think>\n")) << open;
  EXPECT_FALSE(closed.ends_with("<think>\n")) << closed;
}

TEST(ChatTurn, ToolsAreOfferedInTheirOwnKeyOrder) {
  const Tokenizer tokenizer = tiny_tokenizer();
  const ordered_json tools = ordered_json::parse(
      R"([{"type": "function", "function": {"name": "f", "parameters": {"zeta": 1, "alpha": 2}}}])");
  const std::string text = rendered(tokenizer, {"", "hello", false, tools});
  EXPECT_NE(text.find(R"({"type": "function", "function": {"name": "f", "parameters": {"zeta": 1, "alpha": 2}}})"),
            std::string::npos)
      << text;
  EXPECT_EQ(rendered(tokenizer, {"", "hello"}).find("\"name\": \"f\""), std::string::npos);
  EXPECT_THROW(encode_chat_turn(tokenizer, {"", "hello", false, ordered_json{{"type", "function"}}}), RequestError);
}

}  // namespace
}  // namespace minigen
