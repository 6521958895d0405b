#pragma once
// Conversions between fp32 and the 16-bit float formats model files use.
#include <cstddef>
#include <cstdint>

#include "model/tensor.h"

namespace minigen {

float f16_to_f32(uint16_t bits);
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);   // round to nearest even, overflow to inf, NaN kept
uint16_t f32_to_bf16(float value);  // round to nearest even, NaN kept

// Bulk conversions between fp32 values and the little-endian bytes a model file holds (count elements of `dtype`,
// i.e. count · dtype_size_bytes(dtype) bytes). The byte pointers need no alignment.
void decode_to_f32(DType dtype, const std::byte* bytes, std::size_t count, float* values);
void encode_from_f32(DType dtype, const float* values, std::size_t count, std::byte* bytes);

}  // namespace minigen
