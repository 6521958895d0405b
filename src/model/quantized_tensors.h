#pragma once
// How a q8/q4 model file stores a weight matrix W [rows][cols] (written by `minigen quantize`, read back by
// weights_from_tensors): next to the float norms, under the matrix's own name,
//
//   NAME          q8: I8 [rows][cols], the codes −127 … 127
//                 q4: U8 [rows][cols / 2], byte j = (code[2j] + 8) | (code[2j + 1] + 8) << 4 (codes −8 … 7)
//   NAME_scale    F16 [rows][cols / 32], the scale d of each block of 32 along a row:  W[r][k] ≈ d · code
//
// cols must be a multiple of 32. The codes and scales are exactly those quantization at load gives (ops/block_quant),
// and loading copies them into the kernels' panels without rounding anything again, so a saved q8 model computes
// the same bits as `--weights q8` on the original. The tied embedding is stored once, as model.embed_tokens.weight.
#include <string>

#include "model/tensor.h"
#include "model/weights.h"

namespace minigen {

inline const std::string kScaleSuffix = "_scale";

// Adds NAME and NAME_scale for `matrix` quantized as `type` (q8 or q4); a matrix that already holds codes must be of
// that type and is written as it is. Throws minigen::Error naming the tensor when cols is not a multiple of 32.
void put_quantized(TensorMap& tensors, const std::string& name, const Matrix& matrix, WeightType type);

// The matrix NAME of a quantized file from its two tensors (checked: dtypes, shapes, code ranges).
Matrix coded_matrix(const std::string& name, const HostTensor& codes, const HostTensor& scales, int rows, int cols);

}  // namespace minigen
