// A model's reply split into reasoning, content and tool calls (src/chat/reply_parser.*). The input's first byte holds
// the flags (bit 0: the prompt opened a think block), its second the length of the pieces the text is streamed in
// (1–256); the rest is the reply. Beyond "no crash": the streamed deltas add up to parse_reply's split, none is empty,
// consecutive text deltas of one feed differ in kind, text deltas are valid UTF-8 whenever the reply is, reasoning
// never holds a think tag, and each tool call's index counts the calls and its id is the prefix and that index.
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "request/reply_parser.h"
#include "tokenizer/utf8.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  ReplyParserOptions options;
  options.prompt_opened_think = data[0] & 1;
  const std::size_t piece = static_cast<std::size_t>(data[1]) + 1;
  const std::string_view text = fuzz::as_text(data + 2, size - 2);
  const bool valid_text = first_invalid_utf8(text) == std::string_view::npos;

  const ParsedReply whole = parse_reply(text, options);
  ReplyStreamParser parser(options);
  ParsedReply streamed;
  const auto take = [&](const std::vector<ReplyDelta>& deltas) {
    ReplyDelta::Kind previous = ReplyDelta::Kind::kToolCall;
    for (const ReplyDelta& delta : deltas) {
      if (delta.kind == ReplyDelta::Kind::kToolCall) {
        streamed.tool_calls.push_back(delta.tool_call);
      } else {
        fuzz::check(!delta.text.empty(), "no empty delta");
        fuzz::check(delta.kind != previous, "consecutive text of one kind comes as one delta");
        if (valid_text) fuzz::check(first_invalid_utf8(delta.text) == std::string::npos, "deltas are UTF-8");
        (delta.kind == ReplyDelta::Kind::kReasoning ? streamed.reasoning_content : streamed.content) += delta.text;
      }
      previous = delta.kind;
    }
  };
  for (std::size_t start = 0; start < text.size(); start += piece) take(parser.feed(text.substr(start, piece)));
  take(parser.finish());

  fuzz::check(streamed.reasoning_content == whole.reasoning_content, "streamed reasoning == whole");
  fuzz::check(streamed.content == whole.content, "streamed content == whole");
  fuzz::check(streamed.tool_calls.size() == whole.tool_calls.size(), "streamed calls == whole");
  fuzz::check(whole.reasoning_content.find("<think>") == std::string::npos &&
                  whole.reasoning_content.find("</think>") == std::string::npos,
              "reasoning holds no think tag");
  for (std::size_t i = 0; i < whole.tool_calls.size(); ++i) {
    fuzz::check(whole.tool_calls[i].index == static_cast<int>(i), "indexes count the calls");
    fuzz::check(whole.tool_calls[i].id == "call_" + std::to_string(i), "ids are the prefix and the index");
    fuzz::check(streamed.tool_calls[i].arguments == whole.tool_calls[i].arguments, "streamed arguments == whole");
  }
  return 0;
}
