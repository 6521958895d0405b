#pragma once
// Conversions between fp32 values and the bytes of the element types model files use.
#include <cstddef>
#include <cstdint>

#include "model/tensor.h"
#include "ops/float_formats.h"

namespace minigen {

// (The scalar conversions are ops/float_formats.h.)

// Bulk conversions between fp32 values and the little-endian bytes a model file holds (count elements of `dtype`,
// i.e. count · dtype_size_bytes(dtype) bytes). The byte pointers need no alignment.
void decode_to_f32(DType dtype, const std::byte* bytes, std::size_t count, float* values);
void encode_from_f32(DType dtype, const float* values, std::size_t count, std::byte* bytes);

}  // namespace minigen
