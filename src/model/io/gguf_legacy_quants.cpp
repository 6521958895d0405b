#include "model/io/gguf_legacy_quants.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

float read_half(const uint8_t* at) { return f16_to_float(static_cast<uint16_t>(at[0] | (at[1] << 8))); }

}  // namespace

void dequantize_legacy_quants(GgufTensorType type, std::span<const std::byte> blocks, float* values) {
  if (!gguf_is_legacy_quant(type)) throw Error(std::string(gguf_type_name(type)) + " is not Q4_1, Q5_0 or Q5_1");
  const std::size_t block_bytes = gguf_type_bytes(type, kGgufQuantBlock);
  if (blocks.size() % block_bytes != 0) {
    throw Error(std::string(gguf_type_name(type)) + " data of " + std::to_string(blocks.size()) +
                " bytes is not a whole number of " + std::to_string(block_bytes) + "-byte blocks");
  }
  const bool has_min = type != GgufTensorType::kQ5_0;  // Q4_1 and Q5_1 add m to every value
  const bool five_bit = type != GgufTensorType::kQ4_1;
  for (std::size_t b = 0; b < blocks.size() / block_bytes; ++b) {
    const auto* block = reinterpret_cast<const uint8_t*>(blocks.data() + b * block_bytes);
    const float d = read_half(block);
    const float m = has_min ? read_half(block + 2) : 0.0f;
    if (!std::isfinite(d) || !std::isfinite(m)) {
      throw Error(std::string(gguf_type_name(type)) + " block " + std::to_string(b) +
                  " has a scale (d or m) that is not finite");
    }
    const uint8_t* after_scales = block + (has_min ? 4 : 2);
    uint32_t fifth_bits = 0;
    if (five_bit) {
      fifth_bits = static_cast<uint32_t>(after_scales[0]) | (static_cast<uint32_t>(after_scales[1]) << 8) |
                   (static_cast<uint32_t>(after_scales[2]) << 16) | (static_cast<uint32_t>(after_scales[3]) << 24);
    }
    const uint8_t* nibbles = after_scales + (five_bit ? 4 : 0);
    float* out = values + b * kGgufQuantBlock;
    for (int j = 0; j < kGgufQuantBlock; ++j) {
      int q = j < 16 ? nibbles[j] & 0x0f : nibbles[j - 16] >> 4;
      q |= static_cast<int>((fifth_bits >> j) & 1) << 4;
      // Q5_0 centres its codes on 16 (no m); Q4_1 and Q5_1 shift by m instead.
      out[j] = has_min ? static_cast<float>(q) * d + m : static_cast<float>(q - 16) * d;
    }
  }
}

}  // namespace minigen
