#include "request/reply_fields.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

TEST(ReplyFields, AToolCallIsOpenAisFunctionObject) {
  const ParsedToolCall call{0, "call_0", "weather", R"({"city": "Oslo"})"};
  EXPECT_EQ(tool_call_json(call).dump(),
            R"({"function":{"arguments":"{\"city\": \"Oslo\"}","name":"weather"},"id":"call_0","type":"function"})");
}

TEST(ReplyFields, EverySequenceGetsReasoningContentAndToolCalls) {
  nlohmann::json summary = {
      {"sequences",
       {{{"text", "why</think>\n\nSunny. <tool_call>{\"name\": \"weather\", \"arguments\": {}}</tool_call>"}},
        {{"text", "plain"}}}}};
  add_chat_reply_fields(summary, /*prompt_opened_think=*/true, /*tools_offered=*/true);
  const nlohmann::json& first = summary["sequences"][0];
  EXPECT_EQ(first["reasoning_content"], "why");
  EXPECT_EQ(first["content"], "Sunny.");
  ASSERT_EQ(first["tool_calls"].size(), 1u);
  EXPECT_EQ(first["tool_calls"][0]["function"]["name"], "weather");
  EXPECT_EQ(first["tool_calls"][0]["function"]["arguments"], "{}");
  const nlohmann::json& second = summary["sequences"][1];
  EXPECT_EQ(second["reasoning_content"], "plain");  // the prompt opened the think block and it never closed
  EXPECT_EQ(second["content"], "");
  EXPECT_TRUE(second["tool_calls"].empty());
}

TEST(ReplyFields, WithoutToolsOfferedACallBlockStaysContent) {
  nlohmann::json summary = {{"sequences", {{{"text", "<tool_call>{\"name\": \"f\"}</tool_call>"}}}}};
  add_chat_reply_fields(summary, /*prompt_opened_think=*/false, /*tools_offered=*/false);
  EXPECT_EQ(summary["sequences"][0]["content"], "<tool_call>{\"name\": \"f\"}</tool_call>");
  EXPECT_TRUE(summary["sequences"][0]["tool_calls"].empty());
}

}  // namespace
}  // namespace minigen
