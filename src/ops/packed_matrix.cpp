#include "ops/packed_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/process_memory.h"
#include "ops/block_quant.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

// Where code (lane, k within the block) sits inside a group, per the layout in the header.
std::size_t q8_code_offset(int lane, int k) {
  return (static_cast<std::size_t>(k / 2) * PackedMatrix::kPanelWidth + lane) * 2 + k % 2;
}
std::size_t q4_code_offset(int lane, int k) { return static_cast<std::size_t>(k / 4) * 32 + (lane % 8) * 4 + k % 4; }

// An fp16 row's bits into an f16 panel's lane (stride kPanelWidth). An infinity or NaN in the file is refused, as
// the same weight given as an fp32 value would be.
void copy_f16_row(const uint16_t* bits, int in_features, uint16_t* lane) {
  for (int k = 0; k < in_features; ++k) {
    if ((bits[k] & 0x7c00u) == 0x7c00u) {
      throw Error("a weight (" + std::to_string(f16_to_float(bits[k])) +
                  ") is not a finite fp16 value: the model's weights must be finite");
    }
    lane[static_cast<std::size_t>(k) * PackedMatrix::kPanelWidth] = bits[k];
  }
}

// fp16's largest finite value. A weight rounded past it would become infinity, and the SSE4 and scalar kernels
// widen fp16 without F16C, whose infinities and NaNs would then differ from the other targets'.
constexpr float kF16Max = 65504.0f;

}  // namespace

PackedMatrix::PackedMatrix(const float* row_major, int out_features, int in_features, WeightType type)
    : PackedMatrix(stack({row_major}, {out_features}, in_features, type)) {}

void PackedMatrix::use_activations(ActivationCodes codes) {
  if (!is_block_quantized(type_)) throw Error("activation codes apply to q8 and q4 weights only");
  if (type_ == WeightType::kQ4 && codes != ActivationCodes::kInt8) {
    throw Error("q4 weights take int8 activations only (their kernels multiply bytes)");
  }
  activations_ = codes;
}

std::size_t PackedMatrix::group_bytes() const {
  const std::size_t code_bytes = type_ == WeightType::kQ8 ? kQuantBlock * kPanelWidth : kQuantBlock * kPanelWidth / 2;
  return code_bytes + kScaleBytes;
}

PackedMatrix PackedMatrix::stack(const std::vector<const float*>& parts, const std::vector<int>& part_out_features,
                                 int in_features, WeightType type) {
  if (parts.size() != part_out_features.size()) throw Error("PackedMatrix: bad shape");
  std::vector<MatrixSource> sources;
  for (std::size_t part = 0; part < parts.size(); ++part) sources.push_back({part_out_features[part], parts[part]});
  return stack(sources, in_features, type);
}

PackedMatrix PackedMatrix::stack(const std::vector<MatrixSource>& parts, int in_features, WeightType type) {
  if (in_features <= 0) throw Error("PackedMatrix: bad shape");
  PackedMatrix packed;
  packed.in_features_ = in_features;
  packed.type_ = type;
  packed.activations_ = default_activation_codes(type);
  for (const MatrixSource& part : parts) {
    if (part.is_coded() && part.coded != type) {
      throw Error("a matrix stored as " + std::string(weight_type_name(part.coded)) + " cannot run as " +
                  std::string(weight_type_name(type)) + " (quantization cannot be undone)");
    }
    packed.out_features_ += part.rows;
  }
  packed.panels_ = (packed.out_features_ + kPanelWidth - 1) / kPanelWidth;

  // Source row `o` of the stacked matrix (its part and row), or no part for the zero padding of the last panel.
  struct SourceRow {
    const MatrixSource* part = nullptr;
    int row = 0;
  };
  // A source row as fp32 values: in place, or fp16 bits widened into `widened`; null for padding.
  std::vector<float> widened;
  SourceRow widened_row;  // the row `widened` holds (the q8/q4 loop asks for a row once per block)
  const auto row_values = [&](const SourceRow& source) -> const float* {
    if (source.part == nullptr) return nullptr;
    const std::size_t start = static_cast<std::size_t>(source.row) * in_features;
    if (source.part->f16 == nullptr) return source.part->values + start;
    if (widened_row.part != source.part || widened_row.row != source.row || widened.empty()) {
      widened.resize(static_cast<std::size_t>(in_features));
      for (int k = 0; k < in_features; ++k) widened[k] = f16_to_float(source.part->f16[start + k]);
      widened_row = source;
    }
    return widened.data();
  };
  std::vector<SourceRow> source_rows(static_cast<std::size_t>(packed.panels_) * kPanelWidth);
  int out = 0;
  for (const MatrixSource& part : parts) {
    for (int row = 0; row < part.rows; ++row) source_rows[out++] = {&part, row};
  }

  if (is_block_quantized(type)) {
    packed.blocks_ = quant_blocks(in_features);
    const std::size_t bytes = static_cast<std::size_t>(packed.panels_) * packed.quant_panel_bytes();
    packed.quant_ = hwy::AllocateAligned<uint8_t>(bytes);
    if (bytes > 0 && !packed.quant_) throw Error("out of memory packing a weight matrix");
    std::memset(packed.quant_.get(), 0, bytes);
    const std::size_t code_bytes = packed.group_bytes() - kScaleBytes;
    int8_t codes[kQuantBlock];
    for (int p = 0; p < packed.panels_; ++p) {
      for (int b = 0; b < packed.blocks_; ++b) {
        uint8_t* group = packed.quant_.get() + p * packed.quant_panel_bytes() + b * packed.group_bytes();
        for (int lane = 0; lane < kPanelWidth; ++lane) {
          const SourceRow& source = source_rows[static_cast<std::size_t>(p) * kPanelWidth + lane];
          if (source.part == nullptr) continue;  // padding rows stay zero codes with scale 0
          const int first = b * kQuantBlock;
          const int count = std::min(kQuantBlock, in_features - first);
          uint16_t scale;
          if (source.part->is_coded()) {  // copied: the file's codes are the model
            const std::size_t row_start = static_cast<std::size_t>(source.row) * in_features;
            for (int k = 0; k < kQuantBlock; ++k) codes[k] = k < count ? source.part->codes[row_start + first + k] : 0;
            scale = source.part->scales[static_cast<std::size_t>(source.row) * packed.blocks_ + b];
          } else {
            const float* row = row_values(source);
            scale = type == WeightType::kQ8 ? quantize_q8_block(row + first, count, codes)
                                            : quantize_q4_block(row + first, count, codes);
          }
          std::memcpy(group + code_bytes + 2 * lane, &scale, 2);
          for (int k = 0; k < kQuantBlock; ++k) {
            if (type == WeightType::kQ8) {
              group[q8_code_offset(lane, k)] = static_cast<uint8_t>(codes[k]);
            } else {
              const auto nibble = static_cast<uint8_t>(codes[k] + 8);
              group[q4_code_offset(lane, k)] |= lane < 8 ? nibble : static_cast<uint8_t>(nibble << 4);
            }
          }
        }
        // Padding rows have zero bytes; in q4 a zero nibble means code −8, harmless only because the scale is 0.
      }
    }
    return packed;
  }

  const std::size_t elements = packed.panel_offset(packed.panels_);
  if (type == WeightType::kF32) {
    packed.f32_ = hwy::AllocateAligned<float>(elements);
  } else {
    packed.halves_ = hwy::AllocateAligned<uint16_t>(elements);
  }
  if (elements > 0 && !packed.f32_ && !packed.halves_) throw Error("out of memory packing a weight matrix");
  prefer_huge_pages(packed.f32_ ? static_cast<void*>(packed.f32_.get()) : static_cast<void*>(packed.halves_.get()),
                    elements * (type == WeightType::kF32 ? sizeof(float) : sizeof(uint16_t)));
  const int padded_in = static_cast<int>(packed.panel_elements() / kPanelWidth);  // bf16: an odd k gets a zero input
  for (int p = 0; p < packed.panels_; ++p) {
    const std::size_t panel = packed.panel_offset(p);
    for (int lane = 0; lane < kPanelWidth; ++lane) {  // one source row at a time, read in order
      const SourceRow& source = source_rows[static_cast<std::size_t>(p) * kPanelWidth + lane];
      if (type == WeightType::kF16 && source.part != nullptr && source.part->f16 != nullptr) {
        copy_f16_row(source.part->f16 + static_cast<std::size_t>(source.row) * in_features, in_features,
                     packed.halves_.get() + panel + lane);
        continue;
      }
      const float* row = row_values(source);
      if (type == WeightType::kF32) {
        float* out = packed.f32_.get() + panel + lane;
        for (int k = 0; k < padded_in; ++k) {
          out[static_cast<std::size_t>(k) * kPanelWidth] = row != nullptr && k < in_features ? row[k] : 0.0f;
        }
      } else if (type == WeightType::kF16) {
        uint16_t* out = packed.halves_.get() + panel + lane;
        for (int k = 0; k < padded_in; ++k) {
          const float value = row != nullptr && k < in_features ? row[k] : 0.0f;
          if (!(std::fabs(value) <= kF16Max)) {
            throw Error("a weight (" + std::to_string(value) +
                        ") does not fit fp16, whose largest value is 65504: "
                        "run this model as f32 or bf16");
          }
          out[static_cast<std::size_t>(k) * kPanelWidth] = float_to_f16(value);
        }
      } else {
        for (int k = 0; k < padded_in; ++k) {
          const float value = row != nullptr && k < in_features ? row[k] : 0.0f;
          packed.halves_[panel + packed.offset_in_panel(lane, k)] = float_to_bf16_flush_subnormal(value);
        }
      }
    }
  }
  return packed;
}

void PackedMatrix::check_index(int out, int in) const {
  if (out < 0 || out >= out_features_ || in < 0 || in >= in_features_) {
    throw Error("PackedMatrix index (" + std::to_string(out) + ", " + std::to_string(in) + ") is out of range");
  }
}

namespace {

// Readers of one (panel, block) group, unchecked: the public accessors check the index once.
int group_code(const uint8_t* group, WeightType type, int lane, int k) {
  if (type == WeightType::kQ8) return static_cast<int8_t>(group[q8_code_offset(lane, k)]);
  const uint8_t byte = group[q4_code_offset(lane, k)];
  return (lane < 8 ? byte & 0x0f : byte >> 4) - 8;
}

float group_scale(const uint8_t* group, std::size_t group_bytes, int lane) {
  uint16_t bits;
  std::memcpy(&bits, group + group_bytes - PackedMatrix::kScaleBytes + 2 * lane, 2);
  return f16_to_float(bits);
}

}  // namespace

int PackedMatrix::code(int out, int in) const {
  check_index(out, in);
  if (!is_block_quantized(type_)) throw Error("PackedMatrix::code: the matrix is not block-quantized");
  const uint8_t* group = quant_panel(out / kPanelWidth) + static_cast<std::size_t>(in / kQuantBlock) * group_bytes();
  return group_code(group, type_, out % kPanelWidth, in % kQuantBlock);
}

float PackedMatrix::block_scale(int out, int block) const {
  check_index(out, block * kQuantBlock);
  if (!is_block_quantized(type_)) throw Error("PackedMatrix::block_scale: the matrix is not block-quantized");
  const uint8_t* group = quant_panel(out / kPanelWidth) + static_cast<std::size_t>(block) * group_bytes();
  return group_scale(group, group_bytes(), out % kPanelWidth);
}

float PackedMatrix::at(int out, int in) const {
  check_index(out, in);
  if (is_block_quantized(type_)) return block_scale(out, in / kQuantBlock) * static_cast<float>(code(out, in));
  const std::size_t index = element_index(out, in);
  if (type_ == WeightType::kF32) return f32_[index];
  return type_ == WeightType::kF16 ? f16_to_float(halves_[index]) : bf16_to_float(halves_[index]);
}

// The embedding lookup of every prompt and generated token comes here: walk the row once, one scale per block.
void PackedMatrix::row(int out, float* destination) const {
  check_index(out, 0);
  const int lane = out % kPanelWidth;
  if (is_block_quantized(type_)) {
    const uint8_t* group = quant_panel(out / kPanelWidth);
    for (int block = 0; block < blocks_; ++block, group += group_bytes()) {
      const float d = group_scale(group, group_bytes(), lane);
      const int first = block * kQuantBlock;
      const int count = std::min(kQuantBlock, in_features_ - first);
      for (int k = 0; k < count; ++k)
        destination[first + k] = d * static_cast<float>(group_code(group, type_, lane, k));
    }
    return;
  }
  if (type_ == WeightType::kF32) {
    const float* column = f32_panel(out / kPanelWidth) + lane;
    for (int k = 0; k < in_features_; ++k) destination[k] = column[static_cast<std::size_t>(k) * kPanelWidth];
    return;
  }
  if (type_ == WeightType::kF16) {
    const uint16_t* column = f16_panel(out / kPanelWidth) + lane;
    for (int k = 0; k < in_features_; ++k)
      destination[k] = f16_to_float(column[static_cast<std::size_t>(k) * kPanelWidth]);
    return;
  }
  const uint16_t* pairs = bf16_panel(out / kPanelWidth) + 2 * lane;
  for (int k = 0; k < in_features_; ++k) {
    destination[k] = bf16_to_float(pairs[static_cast<std::size_t>(k / 2) * 2 * kPanelWidth + k % 2]);
  }
}

std::size_t PackedMatrix::bytes() const {
  if (is_block_quantized(type_)) return static_cast<std::size_t>(panels_) * quant_panel_bytes();
  return panel_offset(panels_) * (type_ == WeightType::kF32 ? 4 : 2);
}

}  // namespace minigen
