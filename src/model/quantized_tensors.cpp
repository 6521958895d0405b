#include "model/quantized_tensors.h"

#include <cmath>

#include "core/error.h"
#include "ops/block_quant.h"

namespace minigen {
namespace {

// Codes and fp16 scales of one matrix, row-major, quantizing float rows or taking the codes it already holds.
void codes_of(const std::string& name, const Matrix& matrix, WeightType type, std::vector<int8_t>& codes,
              std::vector<uint16_t>& scales) {
  if (matrix.cols % kQuantBlock != 0) {
    throw Error("cannot store '" + name + "' quantized: its " + std::to_string(matrix.cols) +
                " columns are not a multiple of " + std::to_string(kQuantBlock));
  }
  if (matrix.coded != WeightType::kF32) {
    if (matrix.coded != type) {
      throw Error("'" + name + "' is stored as " + std::string(weight_type_name(matrix.coded)) + "; it cannot be " +
                  std::string(weight_type_name(type)));
    }
    codes = matrix.codes;
    scales = matrix.scales;
    return;
  }
  const int blocks = matrix.cols / kQuantBlock;
  codes.resize(static_cast<std::size_t>(matrix.rows) * matrix.cols);
  scales.resize(static_cast<std::size_t>(matrix.rows) * blocks);
  for (int r = 0; r < matrix.rows; ++r) {
    for (int b = 0; b < blocks; ++b) {
      const std::size_t offset = static_cast<std::size_t>(r) * matrix.cols + b * kQuantBlock;
      scales[static_cast<std::size_t>(r) * blocks + b] =
          type == WeightType::kQ8
              ? quantize_q8_block(matrix.values.data() + offset, kQuantBlock, codes.data() + offset)
              : quantize_q4_block(matrix.values.data() + offset, kQuantBlock, codes.data() + offset);
    }
  }
}

}  // namespace

void put_quantized(TensorMap& tensors, const std::string& name, const Matrix& matrix, WeightType type) {
  if (!is_block_quantized(type)) throw Error("put_quantized: " + std::string(weight_type_name(type)) + " is not q8/q4");
  std::vector<int8_t> codes;
  std::vector<uint16_t> scales;
  codes_of(name, matrix, type, codes, scales);
  HostTensor stored;
  if (type == WeightType::kQ8) {
    stored = HostTensor{{matrix.rows, matrix.cols}, std::vector<float>(codes.begin(), codes.end()), DType::kI8};
  } else {
    stored = HostTensor{{matrix.rows, matrix.cols / 2}, std::vector<float>(codes.size() / 2), DType::kU8};
    for (std::size_t j = 0; j < stored.values.size(); ++j) {
      stored.values[j] = static_cast<float>((codes[2 * j] + 8) | ((codes[2 * j + 1] + 8) << 4));
    }
  }
  HostTensor scale_tensor{{matrix.rows, matrix.cols / kQuantBlock}, std::vector<float>(scales.size()), DType::kF16};
  for (std::size_t i = 0; i < scales.size(); ++i) scale_tensor.values[i] = f16_to_float(scales[i]);
  tensors[name] = std::move(stored);
  tensors[name + kScaleSuffix] = std::move(scale_tensor);
}

Matrix coded_matrix(const std::string& name, const HostTensor& codes, const HostTensor& scales, int rows, int cols) {
  const bool q8 = codes.stored_dtype == DType::kI8;
  if (!q8 && codes.stored_dtype != DType::kU8) {
    throw Error("tensor '" + name + "' has a '" + name + kScaleSuffix + "' beside it but is " +
                dtype_name(codes.stored_dtype) + ", not I8 (q8) or U8 (q4) codes");
  }
  if (cols % kQuantBlock != 0)
    throw Error("tensor '" + name + "' is quantized but has " + std::to_string(cols) +
                " columns, not a multiple of 32");
  const std::vector<int64_t> code_shape = {rows, q8 ? cols : cols / 2};
  const std::vector<int64_t> scale_shape = {rows, cols / kQuantBlock};
  if (codes.shape != code_shape) {
    throw Error("tensor '" + name + "' has shape " + shape_string(codes.shape) + " but the config needs " +
                shape_string(code_shape) + " of " + dtype_name(codes.stored_dtype) + " codes");
  }
  if (scales.stored_dtype != DType::kF16 || scales.shape != scale_shape) {
    throw Error("tensor '" + name + kScaleSuffix + "' must be F16 " + shape_string(scale_shape) + ", got " +
                dtype_name(scales.stored_dtype) + " " + shape_string(scales.shape));
  }
  Matrix matrix;
  matrix.rows = rows;
  matrix.cols = cols;
  matrix.coded = q8 ? WeightType::kQ8 : WeightType::kQ4;
  if (codes.shape_only) return matrix;  // a loader's check of the file's claims: no codes to unpack yet
  matrix.codes.resize(static_cast<std::size_t>(rows) * cols);
  for (std::size_t j = 0; j < codes.values.size(); ++j) {
    const int value = static_cast<int>(codes.values[j]);  // exact: read from I8 or U8
    if (q8) {
      if (value < -127) throw Error("tensor '" + name + "' holds the code −128, outside q8's −127 … 127");
      matrix.codes[j] = static_cast<int8_t>(value);
    } else {
      matrix.codes[2 * j] = static_cast<int8_t>((value & 0x0f) - 8);
      matrix.codes[2 * j + 1] = static_cast<int8_t>((value >> 4) - 8);
    }
  }
  matrix.scales.resize(scales.values.size());
  for (std::size_t i = 0; i < scales.values.size(); ++i) {
    if (!std::isfinite(scales.values[i]))
      throw Error("tensor '" + name + kScaleSuffix + "' holds a scale that is not finite");
    matrix.scales[i] = float_to_f16(scales.values[i]);  // exact: read from F16
  }
  return matrix;
}

}  // namespace minigen
