#include "openai/chat_request.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace minigen {
namespace {

using nlohmann::ordered_json;

TEST(ChatRequest, ReadsRolesContentReasoningAndBothToolCallShapes) {
  const ordered_json messages = ordered_json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "parts render as nothing"}]},
    {"role": "assistant", "content": null, "reasoning_content": "think",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"b": 1, "a": "é"}}},
                    {"name": "g", "arguments": "{\"x\":1}"}]},
    {"role": "tool", "tool_call_id": "c1", "content": "42"}])");
  const ChatConversation conversation = chat_conversation_from_json(messages, nullptr);
  ASSERT_EQ(conversation.messages.size(), 3u);
  EXPECT_EQ(conversation.messages[0].content, "");
  EXPECT_FALSE(conversation.messages[0].reasoning_content.has_value());
  EXPECT_EQ(conversation.messages[1].reasoning_content, "think");
  ASSERT_EQ(conversation.messages[1].tool_calls.size(), 2u);
  EXPECT_EQ(conversation.messages[1].tool_calls[0].name, "f");
  EXPECT_EQ(conversation.messages[1].tool_calls[0].arguments, R"({"b": 1, "a": "é"})");  // the client's key order
  EXPECT_EQ(conversation.messages[1].tool_calls[1].arguments, R"({"x":1})");             // a string as it is
  EXPECT_EQ(conversation.messages[2].role, "tool");
  EXPECT_TRUE(conversation.tools.empty());
}

TEST(ChatRequest, ToolsAreWrittenAsPythonsJsonDumpsInTheClientsOrder) {
  const ordered_json tools = ordered_json::parse(
      R"([{"type":"function","function":{"name":"f","parameters":{"type":"object","required":[]}}}])");
  const ChatConversation conversation = chat_conversation_from_json(ordered_json::array(), tools);
  ASSERT_EQ(conversation.tools.size(), 1u);
  EXPECT_EQ(conversation.tools[0],
            R"({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "required": []}}})");
  EXPECT_TRUE(chat_conversation_from_json(ordered_json::array(), ordered_json::array()).tools.empty());
}

TEST(ChatRequest, WrongFieldsAreErrorsThatNameThem) {
  const auto message_of = [](const char* json) {
    try {
      chat_conversation_from_json(ordered_json::parse(json), nullptr);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of(R"({"role": "user"})"), "\"messages\" must be an array");
  EXPECT_EQ(message_of(R"([{"content": "x"}])"), "messages[0] needs a string \"role\"");
  EXPECT_EQ(message_of(R"([{"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}])"),
            "messages[0].tool_calls[0] needs a string \"name\"");
  EXPECT_EQ(message_of(R"([{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}])"),
            "messages[0].tool_calls[0] needs \"arguments\"");
  EXPECT_THROW(chat_conversation_from_json(ordered_json::array(), ordered_json::object()), Error);
}

TEST(ChatRequest, ThinkingIsRequestedInAnyOfMiniMindsThreeWays) {
  EXPECT_FALSE(open_thinking_requested(ordered_json::parse(R"({"model": "m"})")));
  EXPECT_TRUE(open_thinking_requested(ordered_json::parse(R"({"open_thinking": true})")));
  EXPECT_TRUE(open_thinking_requested(ordered_json::parse(R"({"chat_template_kwargs": {"enable_thinking": true}})")));
  EXPECT_TRUE(open_thinking_requested(ordered_json::parse(R"({"chat_template_kwargs": {"open_thinking": true}})")));
  EXPECT_FALSE(open_thinking_requested(ordered_json::parse(R"({"chat_template_kwargs": {"enable_thinking": 1}})")));
  EXPECT_FALSE(open_thinking_requested(ordered_json::parse(R"({"open_thinking": false})")));
}

}  // namespace
}  // namespace minigen
