#include "request/reply_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/utf8.h"

namespace minigen {
namespace {

ReplyParserOptions thinking(bool opened) {
  ReplyParserOptions options;
  options.prompt_opened_think = opened;
  return options;
}

TEST(ReplyParser, ThinkingOnTheReplyStartsInsideTheThinkBlock) {
  const ParsedReply reply = parse_reply("Two and two.\n</think>\n\nIt is 4.", thinking(true));
  EXPECT_EQ(reply.reasoning_content, "Two and two.");
  EXPECT_EQ(reply.content, "It is 4.");
  EXPECT_TRUE(reply.tool_calls.empty());
  EXPECT_EQ(reply.finish_reason(), "stop");
}

TEST(ReplyParser, ThinkingOffTheReplyIsContentUnlessItOpensAThinkBlock) {
  EXPECT_EQ(parse_reply("  It is 4.\n", thinking(false)).content, "It is 4.");
  EXPECT_EQ(parse_reply("It is 4.", thinking(false)).reasoning_content, "");
  const ParsedReply written = parse_reply("<think>\nhmm\n</think>\n\nIt is 4.", thinking(false));
  EXPECT_EQ(written.reasoning_content, "hmm");
  EXPECT_EQ(written.content, "It is 4.");
  // A repeated open tag inside the block and a stray close tag outside one are dropped.
  const ParsedReply repeated = parse_reply("<think>\nhmm</think>ok</think>", thinking(true));
  EXPECT_EQ(repeated.reasoning_content, "hmm");
  EXPECT_EQ(repeated.content, "ok");
}

TEST(ReplyParser, AThinkBlockNeverClosedIsAllReasoning) {
  const ParsedReply reply = parse_reply("still thinking <tool_call>", thinking(true));
  EXPECT_EQ(reply.reasoning_content, "still thinking <tool_call>");
  EXPECT_EQ(reply.content, "");
}

TEST(ReplyParser, ToolCallsBecomeCallsWithIdsAndJsonArguments) {
  ReplyParserOptions options = thinking(true);
  options.tool_call_id_prefix = "call_r7_";
  const ParsedReply reply = parse_reply(
      "need weather</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"北京\", "
      "\"days\": [1, "
      "2.5]}}\n</tool_call>\n<tool_call>{\"name\":\"get_time\",\"arguments\":\"{\\\"zone\\\":\\\"UTC\\\"}\"}"
      "</tool_call>\n<tool_call>{\"name\": \"now\"}</tool_call>",
      options);
  EXPECT_EQ(reply.reasoning_content, "need weather");
  EXPECT_EQ(reply.content, "Checking.");
  ASSERT_EQ(reply.tool_calls.size(), 3u);
  EXPECT_EQ(reply.tool_calls[0].id, "call_r7_0");
  EXPECT_EQ(reply.tool_calls[0].name, "get_weather");
  EXPECT_EQ(reply.tool_calls[0].arguments, "{\"city\": \"北京\", \"days\": [1, 2.5]}");
  EXPECT_EQ(reply.tool_calls[1].id, "call_r7_1");
  EXPECT_EQ(reply.tool_calls[1].index, 1);
  EXPECT_EQ(reply.tool_calls[1].arguments, "{\"zone\":\"UTC\"}");  // a string is passed on as the model wrote it
  EXPECT_EQ(reply.tool_calls[2].arguments, "{}");
  EXPECT_EQ(reply.finish_reason(), "tool_calls");
}

// A model can nest brackets as deep as max_tokens lets it; such a call is not a call (and must not recurse).
TEST(ReplyParser, ACallNestedTooDeeplyStaysText) {
  ReplyParserOptions options;
  options.tool_calls = true;
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  const std::string text = "<tool_call>\n{\"name\": \"f\", \"arguments\": " + deep + "}\n</tool_call>";
  const ParsedReply reply = parse_reply(text, options);
  EXPECT_TRUE(reply.tool_calls.empty());
  EXPECT_EQ(reply.content, text);
}

TEST(ReplyParser, WithoutToolsOfferedATaggedCallIsContent) {
  ReplyParserOptions options = thinking(false);
  options.tool_calls = false;
  const ParsedReply reply = parse_reply("Sure.\n<tool_call>\n{\"name\": \"x\"}\n</tool_call>", options);
  EXPECT_TRUE(reply.tool_calls.empty());
  EXPECT_EQ(reply.content, "Sure.\n<tool_call>\n{\"name\": \"x\"}\n</tool_call>");
  EXPECT_EQ(reply.finish_reason(), "stop");
}

// Found by fuzz_reply_parser: dropping a repeated "<think>" must not let the text around it join into "</think>",
// nor may reasoning resumed in a later block join the earlier block's text into a tag.
TEST(ReplyParser, DroppedTagsDoNotJoinTheTextAroundThemIntoATag) {
  const ParsedReply dropped = parse_reply("need</<think>think>more", thinking(true));
  EXPECT_EQ(dropped.reasoning_content, "need</ think>more");
  EXPECT_EQ(dropped.content, "");
  const ParsedReply resumed = parse_reply("a<thi</think>x<think>nk>b", thinking(true));
  EXPECT_EQ(resumed.reasoning_content, "a<thi nk>b");
  EXPECT_EQ(resumed.content, "x");
  EXPECT_EQ(parse_reply("a</think>x<think>\nb", thinking(true)).reasoning_content, "a\nb");  // whitespace kept
}

TEST(ReplyParser, MalformedOrUnclosedToolCallsStayInTheContent) {
  const ParsedReply malformed =
      parse_reply("A <tool_call>{\"name\": get}</tool_call> B <tool_call>[1]</tool_call>", thinking(false));
  EXPECT_EQ(malformed.content, "A <tool_call>{\"name\": get}</tool_call> B <tool_call>[1]</tool_call>");
  EXPECT_TRUE(malformed.tool_calls.empty());
  const ParsedReply unclosed = parse_reply("Sure.\n<tool_call>{\"name\": \"f\"", thinking(false));
  EXPECT_EQ(unclosed.content, "Sure.\n<tool_call>{\"name\": \"f\"");
  EXPECT_EQ(parse_reply("a <tool_call>{\"name\": \"f\"}</tool_call>\nb", thinking(false)).content, "a \nb");
}

// Every way of cutting the text into two pieces, and one byte at a time: the deltas add up to parse_reply (a tag
// handed out in part would have gone to the wrong field), none holds part of a UTF-8 character, and consecutive
// deltas of one kind were merged.
void expect_streaming_matches_whole(const std::string& text, const ReplyParserOptions& options) {
  const ParsedReply whole = parse_reply(text, options);
  std::vector<std::vector<std::string>> splits;
  for (std::size_t cut = 0; cut <= text.size(); ++cut) splits.push_back({text.substr(0, cut), text.substr(cut)});
  std::vector<std::string> bytes;
  for (const char byte : text) bytes.emplace_back(1, byte);
  splits.push_back(bytes);
  for (const std::vector<std::string>& pieces : splits) {
    ReplyStreamParser parser(options);
    ParsedReply streamed;
    const auto take = [&](const std::vector<ReplyDelta>& deltas) {
      for (const ReplyDelta& delta : deltas) {
        if (delta.kind == ReplyDelta::Kind::kToolCall) {
          streamed.tool_calls.push_back(delta.tool_call);
          continue;
        }
        EXPECT_EQ(first_invalid_utf8(delta.text), std::string::npos) << delta.text;
        (delta.kind == ReplyDelta::Kind::kReasoning ? streamed.reasoning_content : streamed.content) += delta.text;
      }
      for (std::size_t i = 1; i < deltas.size(); ++i) {
        EXPECT_TRUE(deltas[i].kind != deltas[i - 1].kind || deltas[i].kind == ReplyDelta::Kind::kToolCall);
      }
    };
    for (const std::string& piece : pieces) take(parser.feed(piece));
    take(parser.finish());
    EXPECT_EQ(streamed.reasoning_content, whole.reasoning_content);
    EXPECT_EQ(streamed.content, whole.content);
    ASSERT_EQ(streamed.tool_calls.size(), whole.tool_calls.size());
    for (std::size_t i = 0; i < whole.tool_calls.size(); ++i) {
      EXPECT_EQ(streamed.tool_calls[i].id, whole.tool_calls[i].id);
      EXPECT_EQ(streamed.tool_calls[i].arguments, whole.tool_calls[i].arguments);
    }
  }
}

TEST(ReplyStreamParser, PiecesSplitInsideTagsAndCharactersGiveTheWholeReplysSplit) {
  expect_streaming_matches_whole("想一想：二加二。\n</think>\n\n答案是 4 😀。", thinking(true));
  expect_streaming_matches_whole(
      "查天气</think>\n好的 ✓\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"北京\"}}\n"
      "</tool_call>\n<tool_call>{\"name\": bad}</tool_call> 尾 <",
      thinking(true));
  expect_streaming_matches_whole("<think>a < b</think>x</th y <tool_call>{\"name\":\"f\"", thinking(false));
}

TEST(ReplyStreamParser, HandsOutTextAsSoonAsNoTagCanFollow) {
  ReplyStreamParser parser(thinking(true));
  std::vector<ReplyDelta> deltas = parser.feed("Let me see</thi");
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].kind, ReplyDelta::Kind::kReasoning);
  EXPECT_EQ(deltas[0].text, "Let me see");
  deltas = parser.feed("nk>\n\nIt is \xE5\x8C");  // the close tag, then half of 北
  ASSERT_EQ(deltas.size(), 1u);
  EXPECT_EQ(deltas[0].kind, ReplyDelta::Kind::kContent);
  EXPECT_EQ(deltas[0].text, "It is");  // the space waits: it may be trailing
  deltas = parser.feed("\x97 <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_EQ(deltas[0].text, " 北");
  EXPECT_EQ(deltas[1].kind, ReplyDelta::Kind::kToolCall);
  EXPECT_EQ(deltas[1].tool_call.name, "f");
  EXPECT_EQ(deltas[1].tool_call.id, "call_0");
  EXPECT_TRUE(parser.finish().empty());  // the trailing space is dropped
}

}  // namespace
}  // namespace minigen
