#pragma once
// A weight matrix laid out for the matrix-product kernels.
//
// nn.Linear stores W as [out_features][in_features]. The kernels want, for a group of 16 output features, the 16
// weights of one input feature k side by side, so one vector load feeds 16 outputs and x[k] is broadcast to all of
// them. So W is cut into panels of 16 output features; panel p holds W[16p + lane][k] at [k][lane], k-major.
// The last panel is padded with zero rows. The same panel order serves one row (decode) or hundreds (prefill).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "ops/weight_type.h"

namespace minigen {

class PackedMatrix {
 public:
  static constexpr int kPanelWidth = 16;

  PackedMatrix() = default;
  // Packs a row-major [out_features][in_features] matrix. bf16 rounds every weight to nearest-even.
  PackedMatrix(const float* row_major, int out_features, int in_features, WeightType type);
  // Stacks several matrices with the same in_features along the output axis (e.g. q, k and v into one product).
  static PackedMatrix stack(const std::vector<const float*>& parts, const std::vector<int>& part_out_features,
                            int in_features, WeightType type);

  int out_features() const { return out_features_; }
  int in_features() const { return in_features_; }
  int panels() const { return panels_; }
  WeightType type() const { return type_; }
  bool empty() const { return out_features_ == 0; }

  // Panel p, [in_features][16]; only the pointer of the stored type is non-null.
  const float* f32_panel(int p) const { return f32_.get() + panel_offset(p); }
  const uint16_t* bf16_panel(int p) const { return bf16_.get() + panel_offset(p); }

  float at(int out, int in) const;  // one weight as the kernels see it (after bf16 rounding)
  // Bytes the kernels stream per product: every stored element once (padding included).
  std::size_t bytes() const;

 private:
  std::size_t panel_offset(int p) const { return static_cast<std::size_t>(p) * in_features_ * kPanelWidth; }

  int out_features_ = 0;
  int in_features_ = 0;
  int panels_ = 0;
  WeightType type_ = WeightType::kF32;
  hwy::AlignedFreeUniquePtr<float[]> f32_;
  hwy::AlignedFreeUniquePtr<uint16_t[]> bf16_;
};

}  // namespace minigen
