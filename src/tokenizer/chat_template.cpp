#include "tokenizer/chat_template.h"

#include "core/error.h"

namespace minigen {
namespace {

constexpr std::string_view kTurnStart = "<|im_start|>";
constexpr std::string_view kTurnEnd = "<|im_end|>\n";
constexpr std::string_view kEmptyThinkBlock = "<think>\n\n</think>\n\n";
constexpr std::string_view kOpenThinkBlock = "<think>\n";

// Kept in step with render_chatml by hand: the same turns, byte for byte.
constexpr std::string_view kChatmlJinja =
    "{%- for message in messages %}"
    "{%- if message['role'] == 'system' or message['role'] == 'user' %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- raise_exception('unknown chat role: ' + message['role']) }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking %}"
    "{{- '<think>\\n' }}"
    "{%- else %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- endif %}";

// The turns as parts: the template's own text is markup (its added tokens are matched), content is plain.
std::vector<Tokenizer::TextPart> chatml_parts(std::span<const ChatMessage> messages, bool add_generation_prompt,
                                              bool enable_thinking) {
  static constexpr std::string_view kRoleEnd = "\n";
  std::vector<Tokenizer::TextPart> parts;
  for (const ChatMessage& message : messages) {
    if (message.role != "system" && message.role != "user" && message.role != "assistant") {
      throw Error("unknown chat role \"" + message.role + "\"; expected system, user or assistant");
    }
    parts.push_back({kTurnStart, true});
    parts.push_back({message.role, true});
    parts.push_back({kRoleEnd, true});
    if (message.role == "assistant") parts.push_back({kEmptyThinkBlock, true});  // past replies show no reasoning
    parts.push_back({message.content, false});
    parts.push_back({kTurnEnd, true});
  }
  if (add_generation_prompt) {
    parts.push_back({kTurnStart, true});
    parts.push_back({"assistant\n", true});
    parts.push_back({enable_thinking ? kOpenThinkBlock : kEmptyThinkBlock, true});
  }
  return parts;
}

}  // namespace

std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt, bool enable_thinking) {
  std::string prompt;
  for (const Tokenizer::TextPart& part : chatml_parts(messages, add_generation_prompt, enable_thinking)) {
    prompt += part.text;
  }
  return prompt;
}

std::vector<int> encode_chatml(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                               bool add_generation_prompt, bool enable_thinking) {
  return tokenizer.encode_parts(chatml_parts(messages, add_generation_prompt, enable_thinking));
}

std::string_view chatml_jinja_template() { return kChatmlJinja; }

std::vector<int> encode_base_prompt(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<int> ids{tokenizer.bos_id()};
  const std::vector<int> text_ids = tokenizer.encode(text);
  ids.insert(ids.end(), text_ids.begin(), text_ids.end());
  return ids;
}

}  // namespace minigen
