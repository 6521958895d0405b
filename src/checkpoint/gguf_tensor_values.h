#pragma once
// One GGUF tensor's data as the tensors minigen's weight loader takes (model/tensor.h, model/quantized_tensors.h):
//
//   F32, F16, BF16    fp32 values (F16/BF16 widened exactly; stored_dtype says what they were)
//   Q8_0, Q4_0        minigen's own q8/q4 codes and fp16 scales, the blocks copied as they are — or, when the
//                     caller asks for values, the exact d · q as fp32
//   Q4_1, Q5_0, Q5_1  fp32 values, dequantized exactly (model/io/gguf_legacy_quants.h)
//   Q4_K, Q5_K, Q6_K  fp32 values, dequantized exactly (model/io/gguf_kquants.h)
//
// A q8/q4 model packs the values into its own type when it runs, like any float matrix.
#include <optional>
#include <vector>

#include "model/dtype.h"
#include "model/io/gguf_reader.h"
#include "model/tensor.h"

namespace minigen {

// A vector, or one matrix [rows][cols] of a (possibly stacked) GGUF tensor, with its scales when it holds codes.
struct GgufTensorPiece {
  HostTensor values;
  std::optional<HostTensor> scales;
};

// The pieces of `info`: one for a vector or a matrix, dims[2] for stacked experts {cols, rows, experts}. With
// `keep_codes` false, Q8_0/Q4_0 come out as fp32 values. Throws minigen::Error (without the file's name) for a
// quantized vector or a block whose scale is not finite.
std::vector<GgufTensorPiece> gguf_tensor_pieces(const GgufTensorInfo& info, bool keep_codes);

// The DType minigen names a GGUF float type by (F32 for the block types, whose values are read into fp32).
DType gguf_float_dtype(GgufTensorType type);

}  // namespace minigen
