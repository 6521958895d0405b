#include "request/reply_fields.h"

#include <string>

namespace minigen {

nlohmann::json tool_call_json(const ParsedToolCall& call) {
  return {{"id", call.id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

void add_chat_reply_fields(nlohmann::json& summary, bool prompt_opened_think, bool tools_offered) {
  ReplyParserOptions options;
  options.prompt_opened_think = prompt_opened_think;
  options.tool_calls = tools_offered;
  for (nlohmann::json& sequence : summary["sequences"]) {
    const ParsedReply reply = parse_reply(sequence["text"].get<std::string>(), options);
    sequence["reasoning_content"] = reply.reasoning_content;
    sequence["content"] = reply.content;
    nlohmann::json calls = nlohmann::json::array();
    for (const ParsedToolCall& call : reply.tool_calls) calls.push_back(tool_call_json(call));
    sequence["tool_calls"] = calls;
  }
}

}  // namespace minigen
