#include "checkpoint/gguf_tensor_values.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "model/io/gguf_kquants.h"
#include "model/io/gguf_legacy_quants.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

bool is_q8_0_or_q4_0(GgufTensorType type) { return type == GgufTensorType::kQ8_0 || type == GgufTensorType::kQ4_0; }

float block_scale(const unsigned char* block) {
  const float d = f16_to_float(static_cast<uint16_t>(block[0] | (block[1] << 8)));
  // As coded_matrix refuses a non-finite q8/q4 scale: infinity times a zero code would be a NaN weight.
  if (!std::isfinite(d)) throw Error("a block's scale is not finite");
  return d;
}

// The 32 codes of a Q8_0 or Q4_0 block in value order (Q4_0: byte j holds value j + 8 in its low nibble and value
// j + 16 + 8 in its high one, gguf_types.h).
void block_codes(const unsigned char* block, bool q8, int codes[kGgufQuantBlock]) {
  for (int j = 0; j < kGgufQuantBlock; ++j) {
    if (q8) {
      codes[j] = static_cast<int8_t>(block[2 + j]);
    } else {
      const int byte = block[2 + j % 16];
      codes[j] = (j < 16 ? byte & 0x0f : byte >> 4) - 8;
    }
  }
}

// One matrix of Q8_0/Q4_0 blocks as minigen's q8/q4 codes (q4: two codes per byte, value 2j + 8 in the low nibble)
// and fp16 scales.
GgufTensorPiece coded_piece(const std::byte* data, GgufTensorType type, int64_t rows, int64_t cols) {
  const bool q8 = type == GgufTensorType::kQ8_0;
  const uint64_t values = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
  const uint64_t blocks = values / kGgufQuantBlock;
  const uint64_t block_bytes = gguf_type_bytes(type, kGgufQuantBlock);
  GgufTensorPiece piece;
  piece.values = HostTensor{
      {rows, q8 ? cols : cols / 2}, std::vector<float>(q8 ? values : values / 2), q8 ? DType::kI8 : DType::kU8};
  piece.scales = HostTensor{{rows, cols / kGgufQuantBlock}, std::vector<float>(blocks), DType::kF16};
  for (uint64_t b = 0; b < blocks; ++b) {
    const auto* block = reinterpret_cast<const unsigned char*>(data + b * block_bytes);
    piece.scales->values[b] = f16_to_float(static_cast<uint16_t>(block[0] | (block[1] << 8)));
    int codes[kGgufQuantBlock];
    block_codes(block, q8, codes);
    for (int k = 0; k < kGgufQuantBlock; ++k) {
      if (q8) {
        piece.values.values[b * kGgufQuantBlock + k] = static_cast<float>(codes[k]);
      } else if (k % 2 == 0) {
        piece.values.values[b * 16 + k / 2] = static_cast<float>((codes[k] + 8) | ((codes[k + 1] + 8) << 4));
      }
    }
  }
  return piece;
}

// The same blocks as fp32 values d · q: exact (an 11-bit d times a code of at most 8 bits).
void block_values(const std::byte* data, GgufTensorType type, uint64_t count, float* values) {
  const uint64_t block_bytes = gguf_type_bytes(type, kGgufQuantBlock);
  for (uint64_t b = 0; b < count / kGgufQuantBlock; ++b) {
    const auto* block = reinterpret_cast<const unsigned char*>(data + b * block_bytes);
    const float d = block_scale(block);
    int codes[kGgufQuantBlock];
    block_codes(block, type == GgufTensorType::kQ8_0, codes);
    for (int k = 0; k < kGgufQuantBlock; ++k) values[b * kGgufQuantBlock + k] = d * static_cast<float>(codes[k]);
  }
}

}  // namespace

DType gguf_float_dtype(GgufTensorType type) {
  switch (type) {
    case GgufTensorType::kF16:
      return DType::kF16;
    case GgufTensorType::kBF16:
      return DType::kBF16;
    case GgufTensorType::kF32:
    case GgufTensorType::kQ8_0:
    case GgufTensorType::kQ4_0:
    case GgufTensorType::kQ4_1:
    case GgufTensorType::kQ5_0:
    case GgufTensorType::kQ5_1:
    case GgufTensorType::kQ4_K:
    case GgufTensorType::kQ5_K:
    case GgufTensorType::kQ6_K:
      return DType::kF32;
  }
  return DType::kF32;
}

std::vector<GgufTensorPiece> gguf_tensor_pieces(const GgufTensorInfo& info, bool keep_codes) {
  const std::byte* data = info.bytes.data();
  if (info.dims.size() == 1) {
    if (info.type != GgufTensorType::kF32 && info.type != GgufTensorType::kF16 && info.type != GgufTensorType::kBF16) {
      throw Error("tensor '" + info.name + "' is a " + gguf_type_name(info.type) +
                  " vector; minigen keeps vectors as floats");
    }
    HostTensor vector{
        {static_cast<int64_t>(info.dims[0])}, std::vector<float>(info.dims[0]), gguf_float_dtype(info.type)};
    decode_to_f32(vector.stored_dtype, data, info.dims[0], vector.values.data());
    return {{std::move(vector), std::nullopt}};
  }
  const int64_t cols = static_cast<int64_t>(info.dims[0]);
  const int64_t rows = static_cast<int64_t>(info.dims[1]);
  const uint64_t pieces = info.dims.size() == 3 ? info.dims[2] : 1;
  const uint64_t piece_values = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols);
  const uint64_t piece_bytes = gguf_type_bytes(info.type, piece_values);
  std::vector<GgufTensorPiece> out;
  for (uint64_t p = 0; p < pieces; ++p) {
    const std::byte* piece = data + p * piece_bytes;
    if (is_q8_0_or_q4_0(info.type) && keep_codes) {
      out.push_back(coded_piece(piece, info.type, rows, cols));
      continue;
    }
    GgufTensorPiece values{HostTensor{{rows, cols}, std::vector<float>(piece_values), gguf_float_dtype(info.type)}, {}};
    float* into = values.values.values.data();
    try {
      if (gguf_is_k_quant(info.type)) {
        dequantize_k_quants(info.type, std::span(piece, piece_bytes), into);
      } else if (gguf_is_legacy_quant(info.type)) {
        dequantize_legacy_quants(info.type, std::span(piece, piece_bytes), into);
      } else if (is_q8_0_or_q4_0(info.type)) {
        block_values(piece, info.type, piece_values, into);
      } else {
        decode_to_f32(values.values.stored_dtype, piece, piece_values, into);
      }
    } catch (const Error& error) {
      throw Error("tensor '" + info.name + "': " + error.what());
    }
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace minigen
