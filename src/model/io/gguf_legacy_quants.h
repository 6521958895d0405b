#pragma once
// ggml's other blocks of 32 values, Q4_1, Q5_0 and Q5_1 (block_q4_1, block_q5_0, block_q5_1), turned into fp32
// values. llama-quantize writes them itself as fallbacks: a Q4_K_M or Q5_K_M file stores a matrix whose rows are
// not a whole number of 256-value super-blocks (MiniMind's ffn_down, 832 or 1,408 columns) as Q5_0 or Q5_1.
//
//   Q4_1  20 B   d (fp16) · m (fp16) · 16 B of nibbles                         value = d · q + m   (q 0 … 15)
//   Q5_0  22 B   d · 4 B of fifth bits (a little-endian uint32) · 16 B of nibbles   value = d · (q − 16)  (q 0 … 31)
//   Q5_1  24 B   d · m · 4 B of fifth bits · 16 B of nibbles                   value = d · q + m   (q 0 … 31)
//
// Nibble byte j holds value j in its low half and value j + 16 in its high half, as in Q4_0; value j's fifth bit
// is bit j of the uint32. d · q is exact in fp32, so Q5_0 is exact and Q4_1/Q5_1 round once, at the sum.
#include <cstddef>
#include <span>

#include "model/io/gguf_types.h"

namespace minigen {

// The values of `blocks`, whole blocks of `type` (Q4_1, Q5_0 or Q5_1; 32 values each), written to `values`. Throws
// minigen::Error when `blocks` is not a whole number of blocks or a block's d or m is not finite, naming the block.
void dequantize_legacy_quants(GgufTensorType type, std::span<const std::byte> blocks, float* values);

}  // namespace minigen
