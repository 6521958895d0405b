#include "tokenizer/minimind_vocab_layout.h"

#include <array>

namespace minigen {
namespace {

constexpr std::array<AddedTokenSpec, 36> kAddedTokens = {{
    {"<|endoftext|>", true},
    {"<|im_start|>", true},
    {"<|im_end|>", true},
    {"<|object_ref_start|>", true},
    {"<|object_ref_end|>", true},
    {"<|box_start|>", true},
    {"<|box_end|>", true},
    {"<|quad_start|>", true},
    {"<|quad_end|>", true},
    {"<|vision_start|>", true},
    {"<|vision_end|>", true},
    {"<|vision_pad|>", true},
    {"<|image_pad|>", true},
    {"<|video_pad|>", true},
    {"<|audio_start|>", true},
    {"<|audio_end|>", true},
    {"<|audio_pad|>", true},
    {"<tts_pad>", true},
    {"<tts_text_bos>", true},
    {"<tts_text_eod>", true},
    {"<tts_text_bos_single>", true},
    {"<tool_call>", false},
    {"</tool_call>", false},
    {"<tool_response>", false},
    {"</tool_response>", false},
    {"<think>", false},
    {"</think>", false},
    {"<|buffer1|>", false},
    {"<|buffer2|>", false},
    {"<|buffer3|>", false},
    {"<|buffer4|>", false},
    {"<|buffer5|>", false},
    {"<|buffer6|>", false},
    {"<|buffer7|>", false},
    {"<|buffer8|>", false},
    {"<|buffer9|>", false},
}};

}  // namespace

std::span<const AddedTokenSpec> minimind_added_tokens() { return kAddedTokens; }

}  // namespace minigen
