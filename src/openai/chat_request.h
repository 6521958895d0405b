#pragma once
// An OpenAI chat request's messages and tools as minigen renders them (tokenizer/chat_template.h). The conversion
// reads each field the way minimind-3's template does, so a request renders as the template would render it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/chat_template.h"

namespace minigen {

struct ChatConversation {
  std::vector<ChatMessage> messages;
  std::vector<std::string> tools;  // ChatPromptOptions::tools
};

// `messages`: the request's array. A content that is not a string (null, a list of parts) renders as "", as in the
// template; reasoning_content is kept when it is a string; each tool call's name and arguments come from its
// "function" object (or from the call itself when it has none), arguments as ChatToolCall describes. `tools`: the
// request's array, or null when it has none. Parse the request into nlohmann::ordered_json: the template writes each
// tool's keys in the order the client sent them. Throws minigen::Error naming the field that is wrong.
ChatConversation chat_conversation_from_json(const nlohmann::ordered_json& messages,
                                             const nlohmann::ordered_json& tools);

// Whether the request asks for thinking, in any of the three ways MiniMind's server accepts: "open_thinking": true,
// or "chat_template_kwargs" holding "open_thinking" or "enable_thinking" true.
bool open_thinking_requested(const nlohmann::ordered_json& request);

}  // namespace minigen
