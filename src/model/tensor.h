#pragma once
// Named tensors as read from (or written to) a model file. Values are held as fp32 in memory (unless a reader was
// asked to keep fp16 matrices as they are); `stored_dtype` remembers what the file held, so `minigen info` can
// report it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "core/file_io.h"  // MappedFile, which the weight readers use

namespace minigen {

// I8 and U8 hold the integer codes of q8/q4 weights (model/quantized_tensors.h); as values they are exact floats.
enum class DType { kF32, kF16, kBF16, kI8, kU8 };
inline constexpr EnumName<DType> kDTypeNames[] = {
    {DType::kF32, "F32"}, {DType::kF16, "F16"}, {DType::kBF16, "BF16"}, {DType::kI8, "I8"}, {DType::kU8, "U8"}};

const char* dtype_name(DType dtype);  // "F32", "F16", "BF16", "I8", "U8" (safetensors spelling)
std::size_t dtype_size_bytes(DType dtype);

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major, product(shape) elements
  DType stored_dtype = DType::kF32;
  // Instead of `values`, when TensorReadOptions::keep_fp16_matrices kept a 2-D fp16 tensor's bits (row-major).
  std::vector<uint16_t> f16_bits{};
  // TensorReadOptions::shapes_only: the shape and stored_dtype were read, the values were not (both vectors empty).
  bool shape_only = false;

  int64_t element_count() const;
};

struct TensorReadOptions {
  // 2-D fp16 tensors (the matrices of a MiniMind checkpoint) keep their fp16 bits in f16_bits and leave `values`
  // empty: a model that runs as f16 packs them straight from those bits, without a fp32 copy twice their size.
  bool keep_fp16_matrices = false;
  // Reads every tensor's name, shape and dtype (and checks the file's bounds) but no values: a loader checks what a
  // file claims against the model first, so a tensor it would refuse (an unused 2 GB one, a wrong shape) is never
  // copied into memory. Costs the header (safetensors) or the pickle (.pth), not the data.
  bool shapes_only = false;
};

// Ordered by name so that files are written in a stable order.
using TensorMap = std::map<std::string, HostTensor>;

std::string shape_string(const std::vector<int64_t>& shape);  // "[6400, 256]"

}  // namespace minigen
