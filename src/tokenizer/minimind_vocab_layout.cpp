#include "tokenizer/minimind_vocab_layout.h"

#include <array>

namespace minigen {
namespace {

constexpr std::array<AddedTokenSpec, 36> kAddedTokens = {{
    {"<|endoftext|>", true},          // 0
    {"<|im_start|>", true},           // 1
    {"<|im_end|>", true},             // 2
    {"<|object_ref_start|>", true},   // 3
    {"<|object_ref_end|>", true},     // 4
    {"<|box_start|>", true},          // 5
    {"<|box_end|>", true},            // 6
    {"<|quad_start|>", true},         // 7
    {"<|quad_end|>", true},           // 8
    {"<|vision_start|>", true},       // 9
    {"<|vision_end|>", true},         // 10
    {"<|vision_pad|>", true},         // 11
    {"<|image_pad|>", true},          // 12
    {"<|video_pad|>", true},          // 13
    {"<|audio_start|>", true},        // 14
    {"<|audio_end|>", true},          // 15
    {"<|audio_pad|>", true},          // 16
    {"<tts_pad>", true},              // 17
    {"<tts_text_bos>", true},         // 18
    {"<tts_text_eod>", true},         // 19
    {"<tts_text_bos_single>", true},  // 20
    {"<tool_call>", false},           // 21
    {"</tool_call>", false},          // 22
    {"<tool_response>", false},       // 23
    {"</tool_response>", false},      // 24
    {"<think>", false},               // 25
    {"</think>", false},              // 26
    {"<|buffer1|>", false},           // 27
    {"<|buffer2|>", false},           // 28
    {"<|buffer3|>", false},           // 29
    {"<|buffer4|>", false},           // 30
    {"<|buffer5|>", false},           // 31
    {"<|buffer6|>", false},           // 32
    {"<|buffer7|>", false},           // 33
    {"<|buffer8|>", false},           // 34
    {"<|buffer9|>", false},           // 35
}};

}  // namespace

std::span<const AddedTokenSpec> minimind_added_tokens() { return kAddedTokens; }

}  // namespace minigen
