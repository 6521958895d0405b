#include "ops/weight_type.h"

#include <cmath>
#include <cstring>

#include "core/error.h"

namespace minigen {

std::string_view weight_type_name(WeightType type) {
  switch (type) {
    case WeightType::kF32:
      return "f32";
    case WeightType::kBF16:
      return "bf16";
    case WeightType::kQ8:
      return "q8";
    case WeightType::kQ4:
      return "q4";
  }
  return "?";
}

WeightType parse_weight_type(std::string_view name) {
  if (name == "f32" || name == "fp32" || name == "float32") return WeightType::kF32;
  if (name == "bf16" || name == "bfloat16") return WeightType::kBF16;
  if (name == "q8") return WeightType::kQ8;
  if (name == "q4") return WeightType::kQ4;
  throw Error("unknown weight type '" + std::string(name) + "' (expected f32, bf16, q8 or q4)");
}

bool is_block_quantized(WeightType type) { return type == WeightType::kQ8 || type == WeightType::kQ4; }

double weight_type_bits(WeightType type) {
  switch (type) {
    case WeightType::kF32:
      return 32;
    case WeightType::kBF16:
      return 16;
    case WeightType::kQ8:
      return 8.5;
    case WeightType::kQ4:
      return 4.5;
  }
  return 0;
}

uint16_t float_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  // Adding 0x7fff plus the lowest kept bit rounds to nearest and breaks ties toward an even kept mantissa.
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float bf16_to_float(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

uint16_t float_to_f16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to ≥ 65520: infinity
  if (magnitude < 0x38800000u) {
    // Below the smallest normal half (2⁻¹⁴): a multiple of 2⁻²⁴. std::nearbyint rounds ties to even in the
    // default rounding mode, and the scaling by 2²⁴ is exact.
    const float scaled = std::ldexp(std::fabs(value), 24);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent (127 → 15) and round the 23-bit mantissa to 10 bits, ties to even. A carry out of
  // the mantissa correctly bumps the exponent.
  uint32_t half = ((magnitude >> 13) - ((127u - 15u) << 10));
  const uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float f16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    const uint32_t widened = ((exponent + 127u - 15u) << 23) | (mantissa << 13);
    std::memcpy(&magnitude, &widened, sizeof magnitude);
  }
  uint32_t out;
  std::memcpy(&out, &magnitude, sizeof out);
  out |= sign;
  float value;
  std::memcpy(&value, &out, sizeof value);
  return value;
}

}  // namespace minigen
