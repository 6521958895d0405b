#include "request/chat_turn.h"

#include "core/python_json.h"
#include "request/tools.h"
#include "tokenizer/chat_template.h"

namespace minigen {

std::vector<int> encode_chat_turn(const Tokenizer& tokenizer, const ChatTurn& turn) {
  std::vector<ChatMessage> messages;
  if (!turn.system.empty()) messages.push_back({"system", turn.system});
  messages.push_back({"user", turn.user});
  ChatPromptOptions options;
  options.open_thinking = turn.thinking;
  if (!turn.tools.is_null()) {
    tool_functions(turn.tools);  // the shape every tool must have before the template writes it
    for (const nlohmann::ordered_json& tool : turn.tools) options.tools.push_back(python_json_dumps(tool));
  }
  return encode_chat(tokenizer, messages, options);
}

}  // namespace minigen
