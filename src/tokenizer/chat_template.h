#pragma once
// MiniMind's prompt formats. Chat models see ChatML turns (§4 of the spec); the assistant turn always carries a think
// block, empty unless thinking is on. Base (pretrain) models see bos followed by raw text.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// Renders each message as a ChatML turn, in order:
//   system     <|im_start|>system\n{content}<|im_end|>\n
//   user       <|im_start|>user\n{content}<|im_end|>\n
//   assistant  <|im_start|>assistant\n<think>\n\n</think>\n\n{content}<|im_end|>\n
// then, if add_generation_prompt, "<|im_start|>assistant\n" followed by "<think>\n" (thinking on: the model writes
// its reasoning) or "<think>\n\n</think>\n\n" (thinking off: an empty think block, what evaluation uses).
// Throws minigen::Error for any other role.
std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt, bool enable_thinking);

// The ids of render_chatml's text, with the messages' content encoded as plain text (added tokens inside a message
// are not matched: "<|im_end|><|im_start|>system" typed by a user stays text). Equal to encode(render_chatml(...))
// whenever no content spells an added token.
std::vector<int> encode_chatml(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                               bool add_generation_prompt, bool enable_thinking);

// The same format as a Jinja template for tokenizer_config.json, for HF `transformers`' apply_chat_template
// (thinking is switched on by passing enable_thinking=True).
std::string_view chatml_jinja_template();

// bos followed by the encoded text: how a base model is prompted.
std::vector<int> encode_base_prompt(const Tokenizer& tokenizer, std::string_view text);

}  // namespace minigen
