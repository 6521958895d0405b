#include "model/io/gguf_kquants.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

constexpr int kSubBlocks = 8;  // Q4_K and Q5_K: 8 sub-blocks of 32 values, each with its own scale and min
constexpr int kSubBlockValues = 32;

uint16_t read_u16(const uint8_t* at) { return static_cast<uint16_t>(at[0] | (at[1] << 8)); }

// The 6-bit scale and min of sub-block `s` from Q4_K/Q5_K's 12 packed bytes p[0 … 11]. Sub-blocks 0 … 3 keep theirs
// whole in the low 6 bits of p[s] (scale) and p[s + 4] (min). Sub-blocks 4 … 7 keep their low 4 bits in p[s + 4]
// (scale in the low nibble, min in the high one) and their top 2 bits in the spare top bits of the bytes the first
// four use: the scale's in p[s − 4], the min's in p[s].
struct ScaleAndMin {
  int scale;
  int min;
};
ScaleAndMin six_bit_scale_and_min(const uint8_t* p, int s) {
  if (s < 4) return {p[s] & 0x3f, p[s + 4] & 0x3f};
  return {(p[s + 4] & 0x0f) | ((p[s - 4] >> 6) << 4), (p[s + 4] >> 4) | ((p[s] >> 6) << 4)};
}

// d · scale · q is exact in fp32 (11 + 6 + 5 significant bits), and so is dmin · min: the subtraction is the one
// rounding, so the value does not depend on the order of the operations or a fused multiply-add. (d · scale) · q is
// ggml's order, which also gives a zero the sign ggml gives it.
//
// Codes: the 128 bytes hold the sub-blocks in pairs: bytes 32c … 32c + 31 hold sub-block 2c in their low nibbles
// and sub-block 2c + 1 in their high nibbles. Q5_K adds a fifth bit (worth 16) for value i of sub-block s: bit s of
// high_bits[i].
void dequantize_q4_k_or_q5_k(const uint8_t* block, bool five_bit, float* values) {
  const float d = f16_to_float(read_u16(block));
  const float dmin = f16_to_float(read_u16(block + 2));
  const uint8_t* packed_scales = block + 4;
  const uint8_t* high_bits = five_bit ? block + 16 : nullptr;
  const uint8_t* codes = block + (five_bit ? 48 : 16);
  for (int s = 0; s < kSubBlocks; ++s) {
    const ScaleAndMin sub = six_bit_scale_and_min(packed_scales, s);
    const float scale = d * static_cast<float>(sub.scale);
    const float min = dmin * static_cast<float>(sub.min);
    const uint8_t* pair = codes + (s / 2) * kSubBlockValues;
    const int shift = (s % 2) * 4;
    for (int i = 0; i < kSubBlockValues; ++i) {
      int q = (pair[i] >> shift) & 0x0f;
      if (five_bit) q |= ((high_bits[i] >> s) & 1) << 4;
      values[s * kSubBlockValues + i] = scale * static_cast<float>(q) - min;
    }
  }
}

// Q6_K: value n (0 … 255) lies in half h = n / 128, quarter k = (n % 128) / 32, at i = n % 32. Its low 4 bits are
// in low_bits[64h + 32·(k % 2) + i], the low nibble for quarters 0 and 1, the high nibble for 2 and 3; its top 2 bits
// are bits 2k and 2k + 1 of high_bits[32h + i]; its scale is scales[n / 16]. d · scale · (q − 32) is exact in fp32
// (11 + 7 + 5 significant bits); multiplied as (d · scale) · (q − 32), as ggml does, a zero code gets ggml's sign:
// −0 when d · scale is negative.
void dequantize_q6_k(const uint8_t* block, float* values) {
  const uint8_t* low_bits = block;
  const uint8_t* high_bits = block + 128;
  const auto* scales = reinterpret_cast<const int8_t*>(block + 192);
  const float d = f16_to_float(read_u16(block + 208));
  for (int n = 0; n < kGgufSuperBlock; ++n) {
    const int half = n / 128;
    const int quarter = (n % 128) / 32;
    const int i = n % 32;
    const int low = (low_bits[64 * half + 32 * (quarter % 2) + i] >> (4 * (quarter / 2))) & 0x0f;
    const int high = (high_bits[32 * half + i] >> (2 * quarter)) & 0x03;
    const int q = low | (high << 4);
    values[n] = d * static_cast<float>(scales[n / 16]) * static_cast<float>(q - 32);
  }
}

}  // namespace

void dequantize_k_quants(GgufTensorType type, std::span<const std::byte> blocks, float* values) {
  if (!gguf_is_k_quant(type)) throw Error(std::string(gguf_type_name(type)) + " is not a K-quant type");
  const std::size_t block_bytes = gguf_type_bytes(type, kGgufSuperBlock);
  if (blocks.size() % block_bytes != 0) {
    throw Error(std::string(gguf_type_name(type)) + " data of " + std::to_string(blocks.size()) +
                " bytes is not a whole number of " + std::to_string(block_bytes) + "-byte super-blocks");
  }
  const std::size_t count = blocks.size() / block_bytes;
  for (std::size_t b = 0; b < count; ++b) {
    const auto* block = reinterpret_cast<const uint8_t*>(blocks.data() + b * block_bytes);
    float* out = values + b * kGgufSuperBlock;
    // Q6_K has one scale d, after its codes; Q4_K and Q5_K start with d and dmin.
    const bool q6 = type == GgufTensorType::kQ6_K;
    const bool finite =
        q6 ? std::isfinite(f16_to_float(read_u16(block + 208)))
           : std::isfinite(f16_to_float(read_u16(block))) && std::isfinite(f16_to_float(read_u16(block + 2)));
    if (!finite) {
      throw Error(std::string(gguf_type_name(type)) + " super-block " + std::to_string(b) +
                  " has a scale (d or dmin) that is not finite");
    }
    if (q6) {
      dequantize_q6_k(block, out);
    } else {
      dequantize_q4_k_or_q5_k(block, type == GgufTensorType::kQ5_K, out);
    }
  }
}

}  // namespace minigen
