#include "ops/packed_matrix.h"

#include <string>

#include "core/error.h"

namespace minigen {

PackedMatrix::PackedMatrix(const float* row_major, int out_features, int in_features, WeightType type)
    : PackedMatrix(stack({row_major}, {out_features}, in_features, type)) {}

PackedMatrix PackedMatrix::stack(const std::vector<const float*>& parts, const std::vector<int>& part_out_features,
                                 int in_features, WeightType type) {
  if (parts.size() != part_out_features.size() || in_features <= 0) throw Error("PackedMatrix: bad shape");
  PackedMatrix packed;
  packed.in_features_ = in_features;
  packed.type_ = type;
  for (int rows : part_out_features) packed.out_features_ += rows;
  packed.panels_ = (packed.out_features_ + kPanelWidth - 1) / kPanelWidth;
  const std::size_t elements = packed.panel_offset(packed.panels_);
  if (type == WeightType::kF32) {
    packed.f32_ = hwy::AllocateAligned<float>(elements);
  } else {
    packed.bf16_ = hwy::AllocateAligned<uint16_t>(elements);
  }
  if (elements > 0 && !packed.f32_ && !packed.bf16_) throw Error("out of memory packing a weight matrix");

  // Source row `o` of the stacked matrix, or nullptr for the zero padding of the last panel.
  std::vector<const float*> source_rows(static_cast<std::size_t>(packed.panels_) * kPanelWidth, nullptr);
  int out = 0;
  for (std::size_t part = 0; part < parts.size(); ++part) {
    for (int row = 0; row < part_out_features[part]; ++row) {
      source_rows[out++] = parts[part] + static_cast<std::size_t>(row) * in_features;
    }
  }
  for (int p = 0; p < packed.panels_; ++p) {
    for (int k = 0; k < in_features; ++k) {
      for (int lane = 0; lane < kPanelWidth; ++lane) {
        const float* row = source_rows[static_cast<std::size_t>(p) * kPanelWidth + lane];
        const float value = row != nullptr ? row[k] : 0.0f;
        const std::size_t index = packed.panel_offset(p) + static_cast<std::size_t>(k) * kPanelWidth + lane;
        if (type == WeightType::kF32) {
          packed.f32_[index] = value;
        } else {
          packed.bf16_[index] = float_to_bf16(value);
        }
      }
    }
  }
  return packed;
}

float PackedMatrix::at(int out, int in) const {
  if (out < 0 || out >= out_features_ || in < 0 || in >= in_features_) {
    throw Error("PackedMatrix::at(" + std::to_string(out) + ", " + std::to_string(in) + ") is out of range");
  }
  const std::size_t index =
      panel_offset(out / kPanelWidth) + static_cast<std::size_t>(in) * kPanelWidth + out % kPanelWidth;
  return type_ == WeightType::kF32 ? f32_[index] : bf16_to_float(bf16_[index]);
}

std::size_t PackedMatrix::bytes() const { return panel_offset(panels_) * weight_type_bytes(type_); }

}  // namespace minigen
