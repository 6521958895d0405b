#pragma once
// A minimind-3 reply split the way MiniMind's OpenAI server splits it: the think block's text is reasoning_content,
// each <tool_call>{"name": …, "arguments": …}</tool_call> is a tool call, the rest is content. The streaming parser
// takes text as it is generated and hands out deltas; it never hands out part of a tag (it holds back any ending that
// could still grow into "<think>", "</think>", "<tool_call>" or "</tool_call>") nor part of a UTF-8 character.
// parse_reply is the same parser fed the whole text at once, so a stream's deltas always add up to it.
#include <string>
#include <string_view>
#include <vector>

namespace minigen {

struct ParsedToolCall {
  int index = 0;   // the call's place in the reply, from 0: OpenAI's streamed tool_calls[].index
  std::string id;  // tool_call_id_prefix followed by the index: "call_0", "call_1", …
  std::string name;
  std::string arguments;  // JSON text: a string as the model wrote it, anything else as Python's json.dumps spells it
};

struct ReplyDelta {
  enum class Kind { kReasoning, kContent, kToolCall };
  Kind kind;
  std::string text;          // kReasoning, kContent
  ParsedToolCall tool_call;  // kToolCall
};

struct ParsedReply {
  std::string reasoning_content;
  std::string content;
  std::vector<ParsedToolCall> tool_calls;
  // OpenAI's finish_reason for a reply that ended by itself: "tool_calls" when it made any, else "stop".
  std::string_view finish_reason() const { return tool_calls.empty() ? "stop" : "tool_calls"; }
};

// What decides the split, besides the text.
struct ReplyParserOptions {
  // The prompt ended with "<think>\n" (open_thinking): the reply starts inside the think block, as reasoning, until
  // "</think>". Otherwise it starts as content, and a "<think>" it writes opens a think block.
  bool prompt_opened_think = false;
  // Ids must be unique in a conversation: a server passes one per request ("call_<request id>_").
  std::string tool_call_id_prefix = "call_";
  // Whether <tool_call> blocks are tool calls. A request without tools (or with tool_choice "none") keeps them as
  // content: nothing was offered to call.
  bool tool_calls = true;
};

// Rules (MiniMind's server, with the differences noted):
// - reasoning and content are each trimmed of ASCII whitespace at both ends (Python's strip()); whitespace between
//   pieces of content separated by a tool call is kept;
// - a tool call's JSON must be an object with a string "name"; "arguments" missing is "{}"; a call whose JSON is
//   malformed stays in the content as the text the model wrote (MiniMind drops it when another call parsed);
// - an "arguments" string is passed on as it is (MiniMind json.dumps it a second time, quoting the JSON);
// - tags inside the think block are reasoning text, except a repeated "<think>", which is dropped (a space in its
//   place, so the text around it cannot join into a tag; reasoning resumed in a later block is set apart the same
//   way); a "</think>" outside one is dropped;
// - a think block never closed (the reply hit max_tokens) is all reasoning, as MiniMind's stream sends it.
class ReplyStreamParser {
 public:
  explicit ReplyStreamParser(ReplyParserOptions options = {});

  // The deltas the text so far makes certain, in order; consecutive text of one kind comes as one delta.
  std::vector<ReplyDelta> feed(std::string_view text);
  // The rest, once generation has stopped: held-back text, an unclosed tool call as content.
  std::vector<ReplyDelta> finish();

 private:
  enum class Mode { kReasoning, kContent, kToolCall };
  // Emits text of a section trimmed as a whole: leading whitespace is dropped, trailing whitespace waits until more
  // text of that section shows it was not trailing.
  struct TrimmedSection {
    bool started = false;
    bool separator = false;  // pending_whitespace is separate()'s space, not the text's
    std::string pending_whitespace;
    std::string take(std::string_view text);
    // The text so far and the text to come must not join into one word: a space between them unless whitespace is
    // there already (only emitted if more text follows; trailing whitespace is trimmed).
    void separate();
  };

  void process(bool final);
  void emit_text(ReplyDelta::Kind kind, std::string_view text);
  void close_tool_call();

  ReplyParserOptions options_;
  Mode mode_;
  std::string buffer_;     // text not yet handed out: a possible tag start, a partial character
  std::string call_text_;  // inside <tool_call>: the text so far
  TrimmedSection reasoning_;
  TrimmedSection content_;
  int tool_calls_ = 0;
  std::vector<ReplyDelta> out_;
};

ParsedReply parse_reply(std::string_view text, const ReplyParserOptions& options = {});

}  // namespace minigen
