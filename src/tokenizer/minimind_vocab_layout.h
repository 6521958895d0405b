#pragma once
// The fixed head of a minimind-3 vocabulary, shared by the trainer (which writes it) and the tokenizer (which falls
// back on its bos/eos/pad names when no tokenizer_config.json is given): 36 added tokens at ids 0–35, then the 256
// byte symbols at ids 36–291, then one id per merge.
#include <span>
#include <string_view>

namespace minigen {

struct AddedTokenSpec {
  std::string_view content;
  bool special;  // special tokens are dropped by decode(..., skip_special_tokens = true)
};

// Ids 0–35 in order: 0–20 special (<|endoftext|>, <|im_start|>, <|im_end|>, then 18 reserved), 21–35 not special
// (<tool_call>, </tool_call>, <tool_response>, </tool_response>, <think>, </think>, <|buffer1|>…<|buffer9|>).
std::span<const AddedTokenSpec> minimind_added_tokens();

inline constexpr std::string_view kMinimindBosToken = "<|im_start|>";
inline constexpr std::string_view kMinimindEosToken = "<|im_end|>";
inline constexpr std::string_view kMinimindPadToken = "<|endoftext|>";  // also the unk token
inline constexpr int kMinimindModelMaxLength = 32768;                   // max_position_embeddings of minimind-3

}  // namespace minigen
