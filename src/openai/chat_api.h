#pragma once
// The chat side of the OpenAI API: a request's messages, tools, tool_choice, thinking and response_format turned
// into a prompt (minimind-3's template, tokenizer/chat_template.h), an optional grammar and the options of the reply
// parser; and a reply turned back into OpenAI's message and streaming deltas (reasoning_content, content,
// tool_calls), as MiniMind's own server splits them.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/compiled_grammar.h"
#include "grammar/token_vocabulary.h"
#include "request/reply_parser.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

struct ChatPromptRequest {
  std::vector<int> prompt;
  bool thinking = false;  // the prompt opened a think block
  ReplyParserOptions reply;
  std::shared_ptr<const CompiledGrammar> grammar;  // a forced tool call (tool_choice required or named), or null
};

// `body` is the whole request, in the client's key order (tools are rendered in it). Throws ApiError 400 naming the
// field for anything malformed or unsupported, or RequestError for what the request layer checks (tools).
ChatPromptRequest parse_chat_prompt(const nlohmann::ordered_json& body, const Tokenizer& tokenizer,
                                    const std::shared_ptr<const TokenVocabulary>& vocabulary);

// {"role": "assistant", "content": …, "reasoning_content"?: …, "tool_calls"?: [...]}: content is null when the reply
// is only tool calls, as OpenAI sends it.
nlohmann::json chat_message(const ParsedReply& reply);
// A tool call as a streaming delta's tool_calls entry: tool_call_json (request/reply_fields.h) with its "index" in
// the reply.
nlohmann::json streamed_tool_call(const ParsedToolCall& call);

}  // namespace minigen
