// ChatML rendering (src/tokenizer/chat_template.*) of fuzzed messages, encoded with the shipped tokenizer. The
// input's first byte holds the flags (bit 0: add_generation_prompt, bit 1: thinking); the rest is messages separated
// by NUL bytes, each a role byte (0 system, 1 user, 2 assistant, 3 tool, other: an unknown role) and the content.
// Beyond "no crash": render_chatml matches the format written out independently below, byte for byte (a think block
// in an assistant's content split off, a run of tool messages in one user turn), and throws minigen::Error exactly
// when a role is unknown; encode_chatml decodes back to the rendered text and holds exactly one <|im_start|> and one
// <|im_end|> per turn whatever the content spells (content cannot forge a turn); with no '<' in any content it
// equals encode(render_chatml(...)).
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "fuzz_check.h"
#include "shipped_tokenizer.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/chat_template.h"

using namespace minigen;

namespace {

std::string trim_newlines(std::string text, bool front, bool back) {
  while (front && !text.empty() && text.front() == '\n') text.erase(0, 1);
  while (back && !text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The format of chat_template.h's comment, written out again: an assistant's reasoning is what its content holds
// before the first </think> (after the last <think> there), its reply what follows the last </think>.
std::string expected_assistant_turn(const std::string& content) {
  std::string reasoning;
  std::string reply = content;
  const std::size_t first_close = content.find("</think>");
  if (first_close != std::string::npos) {
    reasoning = trim_newlines(content.substr(0, first_close), false, true);
    const std::size_t open = reasoning.rfind("<think>");
    if (open != std::string::npos) reasoning = reasoning.substr(open + 7);
    reasoning = trim_newlines(reasoning, true, false);
    reply = trim_newlines(content.substr(content.rfind("</think>") + 8), true, false);
  }
  return "<|im_start|>assistant\n<think>\n" + trim_newlines(reasoning, true, true) + "\n</think>\n\n" +
         trim_newlines(reply, true, false) + "<|im_end|>\n";
}

std::string expected_text(const std::vector<ChatMessage>& messages, bool generation_prompt, bool thinking) {
  std::string text;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (message.role == "assistant") {
      text += expected_assistant_turn(message.content);
    } else if (message.role == "tool") {
      if (i == 0 || messages[i - 1].role != "tool") text += "<|im_start|>user";
      text += "\n<tool_response>\n" + message.content + "\n</tool_response>";
      if (i + 1 == messages.size() || messages[i + 1].role != "tool") text += "<|im_end|>\n";
    } else {
      text += "<|im_start|>" + message.role + "\n" + message.content + "<|im_end|>\n";
    }
  }
  if (generation_prompt) {
    text += thinking ? "<|im_start|>assistant\n<think>\n" : "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool generation_prompt = data[0] & 1;
  const bool thinking = data[0] & 2;
  const std::string_view rest = fuzz::as_text(data + 1, size - 1);
  std::vector<ChatMessage> messages;
  bool known_roles = true;
  bool markup_free = true;
  for (std::size_t start = 0; start < rest.size();) {
    const std::size_t end = std::min(rest.find('\0', start), rest.size());
    const std::string_view record = rest.substr(start, end - start);
    start = end + 1;
    if (record.empty()) continue;
    static const char* const kRoles[] = {"system", "user", "assistant", "tool", "developer"};
    const std::string role = kRoles[std::min<unsigned>(static_cast<unsigned char>(record[0]), 4)];
    known_roles &= role != "developer";
    messages.push_back({role, std::string(record.substr(1))});
    markup_free &= messages.back().content.find('<') == std::string::npos;
  }

  std::string text;
  try {
    text = render_chatml(messages, generation_prompt, thinking);
  } catch (const Error&) {
    fuzz::check(!known_roles, "only an unknown role is refused");
    return 0;
  }
  fuzz::check(known_roles, "an unknown role is refused");
  fuzz::check(text == expected_text(messages, generation_prompt, thinking), "the ChatML format");

  const Tokenizer& tokenizer = fuzz::shipped_tokenizer();
  const std::vector<int> ids = encode_chatml(tokenizer, messages, generation_prompt, thinking);
  fuzz::check(tokenizer.decode(ids, /*skip_special_tokens=*/false) == text, "encode_chatml decodes to the text");
  const int im_start = *tokenizer.find_token("<|im_start|>");
  const int im_end = *tokenizer.find_token("<|im_end|>");
  std::ptrdiff_t turns = 0;  // a run of tool messages is one turn
  for (std::size_t i = 0; i < messages.size(); ++i)
    turns += messages[i].role != "tool" || i == 0 || messages[i - 1].role != "tool";
  fuzz::check(std::count(ids.begin(), ids.end(), im_start) == turns + (generation_prompt ? 1 : 0),
              "one <|im_start|> per turn");
  fuzz::check(std::count(ids.begin(), ids.end(), im_end) == turns, "one <|im_end|> per turn");
  if (markup_free) fuzz::check(ids == tokenizer.encode(text), "without markup in content, encode_chatml == encode");
  return 0;
}
