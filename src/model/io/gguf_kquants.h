#pragma once
// llama.cpp's K-quant tensors Q4_K, Q5_K and Q6_K (ggml's block_q4_K, block_q5_K, block_q6_K), turned into fp32
// values. Each super-block holds 256 consecutive values of a row; every multi-byte field is little-endian.
//
//   Q4_K  144 B   d (fp16) · dmin (fp16) · 12 B of packed 6-bit scales and mins for 8 sub-blocks of 32 ·
//                 128 B of 4-bit codes
//   Q5_K  176 B   d · dmin · the same 12 B · 32 B of fifth bits · 128 B of 4-bit codes
//   Q6_K  210 B   128 B of low 4 bits · 64 B of high 2 bits · 16 int8 scales (one per 16 values) · d (fp16)
//
//   Q4_K, Q5_K  value = d · scale · q − dmin · min    (scale, min 0 … 63 of the value's sub-block; q 0 … 15 or 0 … 31)
//   Q6_K        value = d · scale · (q − 32)          (scale −128 … 127, q 0 … 63)
//
// Where each bit lives is written beside the code that reads it (gguf_kquants.cpp). The values are exactly
// llama.cpp's: every product fits fp32's 24-bit significand, so the only rounding is Q4_K/Q5_K's one subtraction.
#include <cstddef>
#include <span>

#include "model/io/gguf_types.h"

namespace minigen {

// The values of `blocks`, whole super-blocks of the K-quant `type` (256 values each), written to `values`. Throws
// minigen::Error when `blocks` is not a whole number of super-blocks or a super-block's d or dmin is not finite
// (infinity times a zero code would make a NaN weight), naming the super-block.
void dequantize_k_quants(GgufTensorType type, std::span<const std::byte> blocks, float* values);

}  // namespace minigen
