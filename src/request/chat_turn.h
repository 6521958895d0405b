#pragma once
// One chat turn as the CLI's --chat and Python's chat=True give it: a user message, after a system message when there
// is one, with the generation prompt; the think block opened or left empty; tools offered in the template's tools
// block. (A whole OpenAI messages array is the API's form: openai/chat_request.h.)
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

struct ChatTurn {
  std::string system;  // empty: no system message
  std::string user;
  bool thinking = false;  // open a <think> block instead of the empty one
  // An OpenAI tools array to offer, or null: each definition is written in its own key order, as Python's json.dumps
  // writes it (the template's way).
  nlohmann::ordered_json tools = nullptr;
};

// The ids of the turn in the tokenizer's chat template. Throws RequestError on "tools" for a malformed tools array.
std::vector<int> encode_chat_turn(const Tokenizer& tokenizer, const ChatTurn& turn);

}  // namespace minigen
