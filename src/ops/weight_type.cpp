#include "ops/weight_type.h"

#include <cstring>

#include "core/error.h"

namespace minigen {

std::string_view weight_type_name(WeightType type) { return type == WeightType::kBF16 ? "bf16" : "f32"; }

WeightType parse_weight_type(std::string_view name) {
  if (name == "f32" || name == "fp32" || name == "float32") return WeightType::kF32;
  if (name == "bf16" || name == "bfloat16") return WeightType::kBF16;
  throw Error("unknown weight type '" + std::string(name) + "' (expected f32 or bf16)");
}

std::size_t weight_type_bytes(WeightType type) { return type == WeightType::kBF16 ? 2 : 4; }

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

}  // namespace minigen
