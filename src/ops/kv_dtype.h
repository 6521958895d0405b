#pragma once
// The element type the KV cache stores K and V in (`--kv-dtype`). Attention always computes in fp32: a stored
// element is widened exactly (every one of these types is a subset of fp32 values) before it enters the sums.
//
//   f32   4 bytes, exact.
//   bf16  2 bytes: the upper half of the fp32, rounded to nearest, ties to even (8 mantissa bits, fp32's range).
//   f16   2 bytes: IEEE half, rounded to nearest, ties to even (11 mantissa bits, |x| ≤ 65504, else ±inf); widened
//         with F16C through Highway's PromoteTo.
//   int8  1 byte plus scales: symmetric, one fp32 scale = absmax / 127 per (position, kv head), separately for K
//         and for V; q = round_to_nearest_even(x / scale) clamped to ±127, x ≈ scale · q. A row whose absmax is 0
//         has scale 0 and stores all zeros.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/enum_names.h"
#include "ops/float_formats.h"  // float_to_f16, f16_to_float, float_to_bf16, bf16_to_float

namespace minigen {

enum class KvDType { kF32, kBF16, kF16, kInt8 };
inline constexpr EnumName<KvDType> kKvDTypeNames[] = {
    {KvDType::kF32, "f32"}, {KvDType::kBF16, "bf16"}, {KvDType::kF16, "f16"}, {KvDType::kInt8, "int8"}};

std::string_view kv_dtype_name(KvDType dtype);  // "f32", "bf16", "f16", "int8"
// Throws minigen::Error "unknown --kv-dtype 'x' (expected f32, bf16, f16 or int8)".
KvDType parse_kv_dtype(std::string_view name);
// Bytes of one stored element (int8's per-row scales are counted by the layout, kv_block.h). Inline: the attention
// kernels compute cache addresses with it in their innermost loops, and an out-of-line call there made the compiler
// spill every accumulator register around it (4× slower value sums).
constexpr std::size_t kv_dtype_bytes(KvDType dtype) {
  switch (dtype) {
    case KvDType::kF32:
      return 4;
    case KvDType::kBF16:
    case KvDType::kF16:
      return 2;
    case KvDType::kInt8:
      return 1;
  }
  return 4;
}

// absmax / 127 of a row (NaN elements ignored).
float int8_scale(std::span<const float> row);
// round_to_nearest_even(value / scale) clamped to [−127, 127]; 0 when scale is 0; a NaN quotient gives −127 (a
// defined value where a plain cast would be undefined behaviour).
int8_t quantize_int8(float value, float scale);

}  // namespace minigen
