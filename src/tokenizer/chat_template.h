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

// The chat formats minigen renders. A tokenizer_config.json carries its template as Jinja, which minigen does not
// run; it recognises MiniMind's templates by their fixed text and renders the matching format in C++.
enum class ChatFormat {
  kMiniMind3,  // minimind-3 and minigen's own: assistant turns carry a think block; no default system turn
  kMiniMind2,  // MiniMind2: a default system turn ("You are a helpful assistant") when the first message is not a
               // system message; assistant turns are plain; the generation prompt is "<|im_start|>assistant\n" alone
};

struct ChatFormatChoice {
  ChatFormat format = ChatFormat::kMiniMind3;
  std::string description;  // which template was recognised, for reports ("MiniMind2's template (…)")
};

// Recognises a chat_template: MiniMind2's by its default system message, minimind-3's (and minigen's) by the think
// block; an empty or unrecognised template falls back to the minimind-3 form and says so in the description.
ChatFormatChoice recognise_chat_template(std::string_view chat_template);

// Renders each message as a ChatML turn, in order (the minimind-3 form; see ChatFormat for MiniMind2's):
//   system     <|im_start|>system\n{content}<|im_end|>\n
//   user       <|im_start|>user\n{content}<|im_end|>\n
//   assistant  <|im_start|>assistant\n<think>\n\n</think>\n\n{content}<|im_end|>\n
// then, if add_generation_prompt, "<|im_start|>assistant\n" followed by "<think>\n" (thinking on: the model writes
// its reasoning) or "<think>\n\n</think>\n\n" (thinking off: an empty think block, what evaluation uses).
// Throws minigen::Error for any other role.
// MiniMind2's form renders the same turns without think blocks, after its default system turn, and ignores
// enable_thinking (its template has no way to open a think block).
std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt, bool enable_thinking,
                          ChatFormat format = ChatFormat::kMiniMind3);

// The ids of render_chatml's text, with the messages' content encoded as plain text (added tokens inside a message
// are not matched: "<|im_end|><|im_start|>system" typed by a user stays text). Equal to encode(render_chatml(...))
// whenever no content spells an added token. The format is the one the tokenizer's chat_template is recognised as.
std::vector<int> encode_chatml(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                               bool add_generation_prompt, bool enable_thinking);

// The same format as a Jinja template for tokenizer_config.json, for HF `transformers`' apply_chat_template
// (thinking is switched on by passing enable_thinking=True).
std::string_view chatml_jinja_template();

// bos followed by the encoded text: how a base model is prompted.
std::vector<int> encode_base_prompt(const Tokenizer& tokenizer, std::string_view text);

}  // namespace minigen
