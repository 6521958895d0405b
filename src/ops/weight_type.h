#pragma once
// The element type the matrix products read their weights in. fp32 is exact (bit-identical to the reference);
// bf16 halves the bytes every decode step must stream, at the price of rounding each weight to 8 mantissa bits.
// Accumulation is fp32 in both cases.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace minigen {

enum class WeightType { kF32, kBF16 };

std::string_view weight_type_name(WeightType type);   // "f32", "bf16"
WeightType parse_weight_type(std::string_view name);  // throws minigen::Error for anything else
std::size_t weight_type_bytes(WeightType type);       // 4 or 2

// bf16 is the upper half of an fp32. Rounding is to nearest, ties to even, as PyTorch's .to(torch.bfloat16);
// NaN stays NaN.
uint16_t float_to_bf16(float value);
float bf16_to_float(uint16_t bits);

}  // namespace minigen
