#pragma once
// Block quantization: 32 consecutive values along a matrix row's input dimension share one scale.
//
// Weights (q8, q4) are quantized once, when a model is packed; activations are quantized by every q8/q4 matrix
// product, row by row, so the product can sum int8 × int8 exactly in integers. Both roundings are fixed functions
// of the 32 values alone, so a row's codes never depend on its neighbours in a batch.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "ops/weight_type.h"

namespace minigen {

inline constexpr int kQuantBlock = 32;

inline int quant_blocks(int in_features) { return (in_features + kQuantBlock - 1) / kQuantBlock; }

// q8 weights: scale d = fp16(absmax / 127), code = round-to-nearest-even(w / d) in −127 … 127 (0 when d is 0).
// Writes `count` ≤ 32 codes (the rest of the block is zero padding) and returns d's fp16 bits.
uint16_t quantize_q8_block(const float* values, int count, int8_t* codes);
// q4 weights: m = the value of largest magnitude (sign kept), d = fp16(m / −8), code = clamp(rne(w / d), −8, 7).
uint16_t quantize_q4_block(const float* values, int count, int8_t* codes);

// Activation rows, quantized per block of 32 with an fp32 scale d = absmax / top (not rounded to fp16) and codes
// rne(x / d) in −top … top (ops/weight_type.h's ActivationCodes: int16, top 32767, or int8, top 127). Measured on
// the shipped model (minigen perplexity --kl-base f32): q8 weights × int8 activations agree with fp32 on 97.0 % of
// top-1 tokens, × int16 on 99.5 % — the same as with fp32 activations.
//
// int8 codes are stored twice, as bytes and widened to int16: the kernels with a byte product (vpdpbusd) read the
// bytes, the others (AVX2's vpmaddwd, the scalar loops) run q8 × int8 as the int16 product of the same integers, so
// every kernel sums the same numbers and gives the same bits.
struct QuantizedRows {
  int rows = 0;
  int blocks = 0;
  ActivationCodes codes = ActivationCodes::kInt8;
  hwy::AlignedFreeUniquePtr<int8_t[]> int8_values;    // [rows][blocks · 32], zero past in_features
  hwy::AlignedFreeUniquePtr<int16_t[]> int16_values;  // the same widened (kInt8), or the int16 codes (kInt16)
  std::vector<float> scales;                          // [rows][blocks]
  std::vector<int32_t> sums;                          // Σ of each block's codes (the byte kernels need it: they
                                                      // multiply weight codes stored with an offset, + 8 or + 128)
  std::size_t capacity = 0;

  std::size_t row_offset(int r) const { return static_cast<std::size_t>(r) * blocks * kQuantBlock; }
  const int8_t* int8_row(int r) const { return int8_values.get() + row_offset(r); }
  const int16_t* int16_row(int r) const { return int16_values.get() + row_offset(r); }
  int32_t code(int r, int k) const { return int16_row(r)[k]; }
  float scale(int r, int b) const { return scales[static_cast<std::size_t>(r) * blocks + b]; }
  int32_t sum(int r, int b) const { return sums[static_cast<std::size_t>(r) * blocks + b]; }
};

// Sizes `out` for rows × in_features (so threads can then fill disjoint row ranges), and quantizes rows
// [row_begin, row_end) of x ([rows][in_features]) into it.
void prepare_quantized_rows(QuantizedRows& out, int rows, int in_features, ActivationCodes codes);
void quantize_rows(QuantizedRows& out, const float* x, int in_features, int row_begin, int row_end);

}  // namespace minigen
