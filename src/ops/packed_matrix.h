#pragma once
// A weight matrix laid out for the matrix-product kernels.
//
// nn.Linear stores W as [out_features][in_features]. The kernels want, for a group of 16 output features, the 16
// weights of one input feature k side by side, so one vector load feeds 16 outputs and x[k] is broadcast to all of
// them. So W is cut into panels of 16 output features; panel p holds W[16p + lane][k] at [k][lane], k-major.
// The last panel is padded with zero rows. The same panel order serves one row (decode) or hundreds (prefill).
// f16 keeps exactly this layout with 16-bit elements, so a widened f16 panel is an f32 panel.
//
// bf16 keeps pairs of inputs together instead, as vdpbf16ps (AVX512_BF16) reads them: panel p holds
// W[16p + lane][k] at [k/2][lane][k mod 2], so the 32-bit lane l of a 64-byte row holds lane l's weights for inputs
// 2j and 2j + 1; an odd in_features is padded with a zero input.
//
// q8 and q4 (ops/weight_type.h) keep the panels but cut k into blocks of 32 (ops/block_quant.h). One (panel,
// block) group holds the 16 × 32 codes, then the 16 fp16 scales:
//   q8  codes as [pair k/2][lane][k mod 2] int8: widened to int16, 2 consecutive inputs of one lane are the
//       operand shape of the x86 int16 dot products (vpmaddwd, vpdpwssd). 512 + 32 bytes.
//   q4  codes + 8 as nibbles: byte [quad][lane mod 8][k mod 4] holds lane l < 8 in its low nibble and lane l + 8
//       in its high nibble, so one mask and one shift unpack a quad of all 16 lanes. 256 + 32 bytes.
// k past in_features is zero padding, in the codes and (as zero activations) in the product.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "ops/weight_type.h"

namespace minigen {

// Rows to pack: row-major fp32 values, or row-major fp16 bits (copied as they are into f16 panels, widened
// exactly for the other types), or rows already quantized (codes row-major, one fp16 scale per block of 32 of each
// row) in type `coded`, which are copied as they are.
struct MatrixSource {
  int rows = 0;
  const float* values = nullptr;
  const int8_t* codes = nullptr;
  const uint16_t* scales = nullptr;
  WeightType coded = WeightType::kF32;
  const uint16_t* f16 = nullptr;  // instead of values

  bool is_coded() const { return coded != WeightType::kF32; }
};

class PackedMatrix {
 public:
  static constexpr int kPanelWidth = 16;

  PackedMatrix() = default;
  // Packs a row-major [out_features][in_features] matrix. f16 and bf16 round every weight to nearest-even (f16
  // throws minigen::Error for a weight beyond its range, ±65504); q8 and q4 quantize blocks of 32 (throws for a
  // weight that is not finite).
  PackedMatrix(const float* row_major, int out_features, int in_features, WeightType type);
  // Stacks several matrices with the same in_features along the output axis (e.g. q, k and v into one product).
  static PackedMatrix stack(const std::vector<const float*>& parts, const std::vector<int>& part_out_features,
                            int in_features, WeightType type);
  // The same from sources that may hold codes; a coded source packs only into its own type (else minigen::Error).
  static PackedMatrix stack(const std::vector<MatrixSource>& parts, int in_features, WeightType type);

  int out_features() const { return out_features_; }
  int in_features() const { return in_features_; }
  int panels() const { return panels_; }
  WeightType type() const { return type_; }
  // q8/q4: the codes each activation row is quantized to in a product with this matrix (ops/weight_type.h);
  // default_activation_codes(type()) until use_activations. Throws minigen::Error for another type, or q4 × int16.
  ActivationCodes activations() const { return activations_; }
  void use_activations(ActivationCodes codes);
  bool empty() const { return out_features_ == 0; }

  // Panel p, [in_features][16] (bf16: [in_pairs][16][2]); only the pointer of the stored type is non-null.
  const float* f32_panel(int p) const { return f32_.get() + panel_offset(p); }
  const uint16_t* f16_panel(int p) const { return halves_.get() + panel_offset(p); }
  const uint16_t* bf16_panel(int p) const { return halves_.get() + panel_offset(p); }
  int in_pairs() const { return (in_features_ + 1) / 2; }  // bf16: input pairs per panel row, padding included
  const uint8_t* quant_panel(int p) const { return quant_.get() + static_cast<std::size_t>(p) * quant_panel_bytes(); }

  // q8/q4: blocks of 32 along k, and the bytes of one (panel, block) group.
  int blocks() const { return blocks_; }
  std::size_t group_bytes() const;
  static constexpr std::size_t kScaleBytes = 2 * kPanelWidth;  // 16 fp16 scales after each group's codes
  int code(int out, int in) const;                             // q8/q4: the signed integer code of one weight
  float block_scale(int out, int block) const;                 // q8/q4: d of one block, as stored (fp16 widened)

  float at(int out, int in) const;  // one weight as the kernels see it (after rounding or quantization)
  // Row `out` of the matrix as the kernels see it (the embedding lookup of a tied lm_head reads it here).
  void row(int out, float* destination) const;
  // Bytes the kernels stream per product: every stored element once (padding included).
  std::size_t bytes() const;

 private:
  // Elements of one f32, f16 or bf16 panel: bf16 rounds in_features up to whole pairs.
  std::size_t panel_elements() const {
    return static_cast<std::size_t>(type_ == WeightType::kBF16 ? 2 * in_pairs() : in_features_) * kPanelWidth;
  }
  std::size_t panel_offset(int p) const { return static_cast<std::size_t>(p) * panel_elements(); }
  // Where weight (lane, in) of an f32, f16 or bf16 panel sits inside the panel.
  std::size_t offset_in_panel(int lane, int in) const {
    if (type_ == WeightType::kBF16) return (static_cast<std::size_t>(in / 2) * kPanelWidth + lane) * 2 + in % 2;
    return static_cast<std::size_t>(in) * kPanelWidth + lane;
  }
  std::size_t element_index(int out, int in) const {
    return panel_offset(out / kPanelWidth) + offset_in_panel(out % kPanelWidth, in);
  }
  std::size_t quant_panel_bytes() const { return static_cast<std::size_t>(blocks_) * group_bytes(); }
  void check_index(int out, int in) const;

  int out_features_ = 0;
  int in_features_ = 0;
  int panels_ = 0;
  int blocks_ = 0;
  WeightType type_ = WeightType::kF32;
  ActivationCodes activations_ = ActivationCodes::kInt16;
  hwy::AlignedFreeUniquePtr<float[]> f32_;
  hwy::AlignedFreeUniquePtr<uint16_t[]> halves_;  // f16 or bf16 bits
  hwy::AlignedFreeUniquePtr<uint8_t[]> quant_;
};

}  // namespace minigen
