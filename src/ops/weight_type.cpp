#include "ops/weight_type.h"

#include "core/error.h"

namespace minigen {

std::string_view weight_type_name(WeightType type) { return name_in(kWeightTypeNames, type); }

WeightType parse_weight_type(std::string_view name) {
  // PyTorch's spellings are accepted too: they appear in config.json's torch_dtype.
  if (name == "fp32" || name == "float32") return WeightType::kF32;
  if (name == "fp16" || name == "float16") return WeightType::kF16;
  if (name == "bfloat16") return WeightType::kBF16;
  if (const auto type = value_named(kWeightTypeNames, name)) return *type;
  throw Error("unknown weight type '" + std::string(name) + "' (expected " + names_listed(kWeightTypeNames) + ")");
}

bool is_block_quantized(WeightType type) { return type == WeightType::kQ8 || type == WeightType::kQ4; }

bool is_half_float(WeightType type) { return type == WeightType::kF16 || type == WeightType::kBF16; }

std::string_view activation_codes_name(ActivationCodes codes) { return name_in(kActivationCodeNames, codes); }

ActivationCodes parse_activation_codes(std::string_view name) {
  if (const auto codes = value_named(kActivationCodeNames, name)) return *codes;
  throw Error("unknown activation codes '" + std::string(name) + "' (expected " + names_listed(kActivationCodeNames) +
              ")");
}

ActivationCodes default_activation_codes(WeightType type) {
  return type == WeightType::kQ4 ? ActivationCodes::kInt8 : ActivationCodes::kInt16;
}

std::string_view reported_activations(WeightType type, ActivationCodes codes) {
  return is_block_quantized(type) ? activation_codes_name(codes) : std::string_view();
}

std::string weights_label(WeightType type, ActivationCodes codes) {
  std::string label(weight_type_name(type));
  if (is_block_quantized(type) && codes != default_activation_codes(type)) {
    label += "·" + std::string(activation_codes_name(codes));
  }
  return label;
}

double weight_type_bits(WeightType type) {
  switch (type) {
    case WeightType::kF32:
      return 32;
    case WeightType::kF16:
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
