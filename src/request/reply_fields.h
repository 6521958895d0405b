#pragma once
// A parsed reply's tool calls as JSON, in OpenAI's shape, and the reply fields `minigen generate --chat … --json` and
// Python's generate(chat=True) add to each sequence of the run summary (generate/run_summary.h).
#include <nlohmann/json.hpp>

#include "request/reply_parser.h"

namespace minigen {

// {"id", "type": "function", "function": {"name", "arguments"}}.
nlohmann::json tool_call_json(const ParsedToolCall& call);

// Adds to each of the summary's sequences, from its "text": reasoning_content (the think block's text;
// `prompt_opened_think` when the prompt opened it), content, and tool_calls parsed from <tool_call> blocks when the
// prompt offered tools ([] otherwise).
void add_chat_reply_fields(nlohmann::json& summary, bool prompt_opened_think, bool tools_offered);

}  // namespace minigen
