#include "ops/weight_type.h"

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

}  // namespace minigen
