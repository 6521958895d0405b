#include "tokenizer/chat_template.h"

#include "core/error.h"

namespace minigen {
namespace {

constexpr std::string_view kTurnStart = "<|im_start|>";
constexpr std::string_view kTurnEnd = "<|im_end|>\n";
constexpr std::string_view kEmptyThinkBlock = "<think>\n\n</think>\n\n";
constexpr std::string_view kOpenThinkBlock = "<think>\n";
// MiniMind2's template opens every conversation that has no system message with this one.
constexpr std::string_view kMiniMind2DefaultSystem = "You are a helpful assistant";

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
                                              bool enable_thinking, ChatFormat format) {
  static constexpr std::string_view kRoleEnd = "\n";
  const bool minimind2 = format == ChatFormat::kMiniMind2;
  std::vector<Tokenizer::TextPart> parts;
  if (minimind2 && (messages.empty() || messages.front().role != "system")) {
    parts.push_back({kTurnStart, true});
    parts.push_back({"system\n", true});
    parts.push_back({kMiniMind2DefaultSystem, true});
    parts.push_back({kTurnEnd, true});
  }
  for (const ChatMessage& message : messages) {
    if (message.role != "system" && message.role != "user" && message.role != "assistant") {
      throw Error("unknown chat role \"" + message.role + "\"; expected system, user or assistant");
    }
    parts.push_back({kTurnStart, true});
    parts.push_back({message.role, true});
    parts.push_back({kRoleEnd, true});
    // minimind-3's past replies show an empty think block (no reasoning); MiniMind2's show the reply alone.
    if (message.role == "assistant" && !minimind2) parts.push_back({kEmptyThinkBlock, true});
    parts.push_back({message.content, false});
    parts.push_back({kTurnEnd, true});
  }
  if (add_generation_prompt) {
    parts.push_back({kTurnStart, true});
    parts.push_back({"assistant\n", true});
    if (!minimind2) parts.push_back({enable_thinking ? kOpenThinkBlock : kEmptyThinkBlock, true});
  }
  return parts;
}

}  // namespace

ChatFormatChoice recognise_chat_template(std::string_view chat_template) {
  if (chat_template.empty()) {
    return {ChatFormat::kMiniMind3, "ChatML in the minimind-3 form (the tokenizer has no chat_template)"};
  }
  if (chat_template.find(kMiniMind2DefaultSystem) != std::string_view::npos) {
    return {ChatFormat::kMiniMind2,
            "MiniMind2's template (default system turn \"You are a helpful assistant\", no think block)"};
  }
  if (chat_template.find("<think>") != std::string_view::npos) {
    return {ChatFormat::kMiniMind3,
            "minimind-3's template (generation prompt with the empty think block `<think>\\n\\n</think>\\n\\n`)"};
  }
  return {ChatFormat::kMiniMind3, "ChatML in the minimind-3 form (the tokenizer's chat_template was not recognised)"};
}

std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt, bool enable_thinking,
                          ChatFormat format) {
  std::string prompt;
  for (const Tokenizer::TextPart& part : chatml_parts(messages, add_generation_prompt, enable_thinking, format)) {
    prompt += part.text;
  }
  return prompt;
}

std::vector<int> encode_chatml(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                               bool add_generation_prompt, bool enable_thinking) {
  const ChatFormat format = recognise_chat_template(tokenizer.chat_template()).format;
  return tokenizer.encode_parts(chatml_parts(messages, add_generation_prompt, enable_thinking, format));
}

std::string_view chatml_jinja_template() { return kChatmlJinja; }

std::vector<int> encode_base_prompt(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<int> ids{tokenizer.bos_id()};
  const std::vector<int> text_ids = tokenizer.encode(text);
  ids.insert(ids.end(), text_ids.begin(), text_ids.end());
  return ids;
}

}  // namespace minigen
