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

}  // namespace

std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt, bool enable_thinking) {
  std::string prompt;
  for (const ChatMessage& message : messages) {
    if (message.role != "system" && message.role != "user" && message.role != "assistant") {
      throw Error("unknown chat role \"" + message.role + "\"; expected system, user or assistant");
    }
    prompt += kTurnStart;
    prompt += message.role;
    prompt += '\n';
    if (message.role == "assistant") prompt += kEmptyThinkBlock;  // past replies show no reasoning
    prompt += message.content;
    prompt += kTurnEnd;
  }
  if (add_generation_prompt) {
    prompt += kTurnStart;
    prompt += "assistant\n";
    prompt += enable_thinking ? kOpenThinkBlock : kEmptyThinkBlock;
  }
  return prompt;
}

std::string_view chatml_jinja_template() { return kChatmlJinja; }

std::vector<int> encode_base_prompt(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<int> ids{tokenizer.bos_id()};
  const std::vector<int> text_ids = tokenizer.encode(text);
  ids.insert(ids.end(), text_ids.begin(), text_ids.end());
  return ids;
}

}  // namespace minigen
