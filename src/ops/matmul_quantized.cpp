// The q8/q4 matrix product (ops/matmul_quantized.h): a scalar reference and a kernel compiled per x86 SIMD level.
//
// Highway 1.0.3 has no integer dot-product op, so the kernel for AVX2 and above is written with the AVX2 intrinsics
// Highway's target attributes enable: q8 widens its int8 codes to int16 and vpmaddwd multiplies them with the int16
// activations, adding each lane's 2 products into int32; q4's vpmaddubsw multiplies unsigned nibbles by int8
// activations and adds pairs into int16, and vpmaddwd with ones widens those to int32. Narrower targets run the
// scalar loops. On the AVX-512 target a CPU with VNNI runs ops/matmul_quantized_vnni.cpp instead: the same
// integers with one instruction per product step, 16 lanes wide; on the AVX2 target a CPU with AVX-VNNI runs
// ops/matmul_quantized_avx_vnni.cpp, the AVX2 tile with those single-instruction steps.
#include "ops/matmul_quantized.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/assert.h"
#include "ops/block_quant.h"
#include "ops/matmul_quantized_avx_vnni.h"
#include "ops/matmul_quantized_vnni.h"
#include "ops/quantized_tile_walk.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/matmul_quantized.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep — re-includes this file once per SIMD target
#include "hwy/highway.h"
// clang-format on

#ifndef MINIGEN_MATMUL_QUANTIZED_ONCE
#define MINIGEN_MATMUL_QUANTIZED_ONCE
namespace minigen {

// The scalar form of one output element, shared by the reference and the kernels of targets below AVX2.
inline float quantized_dot(const PackedMatrix& weight, const QuantizedRows& xq, int r, int o) {
  float acc = 0.0f;
  for (int b = 0; b < xq.blocks; ++b) {
    int32_t isum = 0;
    const int end = std::min(weight.in_features(), (b + 1) * kQuantBlock);
    for (int k = b * kQuantBlock; k < end; ++k) isum += weight.code(o, k) * xq.code(r, k);
    acc = std::fma(static_cast<float>(isum), weight.block_scale(o, b) * xq.scale(r, b), acc);
  }
  return acc;
}

inline void store_output(float& target, float value, MatmulOutput mode) {
  target = mode == MatmulOutput::kAddTo ? target + value : value;
}

inline void quantized_panels_scalar(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                                    int panel_end, MatmulOutput mode) {
  const int out_end = std::min(weight.out_features(), panel_end * PackedMatrix::kPanelWidth);
  for (int r = 0; r < xq.rows; ++r) {
    for (int o = panel_begin * PackedMatrix::kPanelWidth; o < out_end; ++o) {
      store_output(out[static_cast<std::size_t>(r) * weight.out_features() + o], quantized_dot(weight, xq, r, o), mode);
    }
  }
}

}  // namespace minigen
#endif  // MINIGEN_MATMUL_QUANTIZED_ONCE

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2

// The AVX2 register tile (vpmaddwd / vpmaddubsw steps); the AVX-VNNI kernel includes the same tile with its
// one-instruction steps (ops/matmul_quantized_avx_vnni.cpp).
#define MINIGEN_QUANT_TILE_AVX_VNNI 0
#include "ops/quantized_tile_avx2-inl.h"
#undef MINIGEN_QUANT_TILE_AVX_VNNI

// Quantizes one whole block of 32 activations as block_quant.cpp's quantize_rows does, 8 lanes at a time: the
// same absmax (max is exact in any order), the same IEEE division, the same round-half-even and clamp. A block
// holding a NaN returns false and is left to the scalar loop (whose max skips NaNs).
HWY_INLINE bool quantize_block(const float* x, ActivationCodes codes, float& scale, int32_t& sum, int8_t* out8,
                               int16_t* out16) {
  __m256 v[4];
  __m256 unordered = _mm256_setzero_ps();
  __m256 absmax = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v[i], v[i], _CMP_UNORD_Q));
    absmax = _mm256_max_ps(absmax, _mm256_and_ps(v[i], abs_mask));
  }
  if (_mm256_movemask_ps(unordered) != 0) return false;
  __m128 folded = _mm_max_ps(_mm256_castps256_ps128(absmax), _mm256_extractf128_ps(absmax, 1));
  folded = _mm_max_ps(folded, _mm_movehl_ps(folded, folded));
  folded = _mm_max_ss(folded, _mm_shuffle_ps(folded, folded, 1));
  const float top = codes == ActivationCodes::kInt8 ? 127.0f : 32767.0f;
  const float d = _mm_cvtss_f32(folded) / top;
  scale = d;
  sum = 0;
  __m256i q[4];
  if (d != 0.0f && std::isfinite(d)) {
    const __m256 dv = _mm256_set1_ps(d), high = _mm256_set1_ps(top), low = _mm256_set1_ps(-top);
    __m256i total = _mm256_setzero_si256();
    for (int i = 0; i < 4; ++i) {
      const __m256 rounded = _mm256_round_ps(_mm256_div_ps(v[i], dv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      q[i] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(rounded, low), high));
      total = _mm256_add_epi32(total, q[i]);
    }
    __m128i t = _mm_add_epi32(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4e));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1));
    sum = _mm_cvtsi128_si32(t);
  } else {
    for (int i = 0; i < 4; ++i) q[i] = _mm256_setzero_si256();
  }
  // packs interleave the 128-bit halves; permute4x64 puts the lanes back in order.
  const __m256i w01 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xd8);
  const __m256i w23 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[2], q[3]), 0xd8);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out16), w01);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out16 + 16), w23);
  if (codes == ActivationCodes::kInt8) {  // the bytes too (block_quant.h)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out8), _mm256_permute4x64_epi64(_mm256_packs_epi16(w01, w23), 0xd8));
  }
  return true;
}

void quantize_rows_simd(QuantizedRows& xq, const float* x, int in_features, int row_begin, int row_end) {
  const int whole_blocks = in_features / kQuantBlock;
  for (int r = row_begin; r < row_end; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * in_features;
    bool all_done = true;
    for (int b = 0; b < whole_blocks && all_done; ++b) {
      const std::size_t at = xq.row_offset(r) + static_cast<std::size_t>(b) * kQuantBlock;
      const std::size_t slot = static_cast<std::size_t>(r) * xq.blocks + b;
      all_done = quantize_block(row + b * kQuantBlock, xq.codes, xq.scales[slot], xq.sums[slot],
                                xq.int8_values.get() + at, xq.int16_values.get() + at);
    }
    // A ragged last block or a NaN: the whole row through the scalar loop (same results for the blocks above).
    if (!all_done || whole_blocks != xq.blocks) quantize_rows(xq, x, in_features, r, r + 1);
  }
}

void matmul_panels_quantized(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                             int panel_end, MatmulOutput mode) {
#if HWY_TARGET == HWY_AVX3
  // AVX-512 with VNNI: the same sums, 16 lanes and 8 rows at a time (ops/matmul_quantized_vnni.h).
  if (avx512_vnni_kernel_enabled()) return quantized_panels_avx512_vnni(out, xq, weight, panel_begin, panel_end, mode);
#endif
#if HWY_TARGET == HWY_AVX2
  // AVX2 with AVX-VNNI: the same tile with one instruction per integer step (ops/matmul_quantized_avx_vnni.h).
  if (avx_vnni_kernel_enabled()) return quantized_panels_avx_vnni(out, xq, weight, panel_begin, panel_end, mode);
#endif
  quantized_panels_256(out, xq, weight, panel_begin, panel_end, mode);
}

#else  // targets below AVX2: the scalar loops, same integers and the same fma chain

void quantize_rows_simd(QuantizedRows& xq, const float* x, int in_features, int row_begin, int row_end) {
  quantize_rows(xq, x, in_features, row_begin, row_end);
}

void matmul_panels_quantized(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                             int panel_end, MatmulOutput mode) {
  quantized_panels_scalar(out, xq, weight, panel_begin, panel_end, mode);
}

#endif

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(matmul_panels_quantized);
HWY_EXPORT(quantize_rows_simd);

namespace {

// Below this many rows quantizing inline is cheaper than handing rows to the pool.
constexpr int kRowsWorthSplitting = 8;

void quantize_activations(QuantizedRows& xq, const float* x, int rows, int in_features, ActivationCodes codes,
                          ThreadPool& pool) {
  prepare_quantized_rows(xq, rows, in_features, codes);
  if (rows < kRowsWorthSplitting) {
    HWY_DYNAMIC_DISPATCH(quantize_rows_simd)(xq, x, in_features, 0, rows);
    return;
  }
  pool.parallel_for(rows, [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(quantize_rows_simd)(xq, x, in_features, static_cast<int>(begin), static_cast<int>(end));
  });
}

}  // namespace

void matmul_quantized(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool,
                      MatmulOutput mode) {
  // One scratch per calling thread (the forward pass calls matmul from one thread at a time). The lambdas below
  // must capture a reference to it: naming a thread_local inside them would reach each worker's own, empty one.
  thread_local QuantizedRows scratch;
  QuantizedRows& xq = scratch;
  quantize_activations(xq, x, rows, weight.in_features(), weight.activations(), pool);
  // The kernels walk the weight's blocks with the activations' blocks: both cut in_features into blocks of 32.
  MINIGEN_ASSERT(xq.rows == rows && xq.blocks == weight.blocks(), "matmul_quantized: ", xq.rows, " rows of ", xq.blocks,
                 " blocks against ", rows, " rows and a weight of ", weight.blocks(), " blocks");
  pool.parallel_for(weight.panels(), [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(matmul_panels_quantized)
    (out, xq, weight, static_cast<int>(begin), static_cast<int>(end), mode);
  });
}

void matmul_reference_quantized(float* out, const float* x, const PackedMatrix& weight, int rows, MatmulOutput mode) {
  QuantizedRows xq;
  prepare_quantized_rows(xq, rows, weight.in_features(), weight.activations());
  quantize_rows(xq, x, weight.in_features(), 0, rows);
  quantized_panels_scalar(out, xq, weight, 0, weight.panels(), mode);
}

}  // namespace minigen
#endif  // HWY_ONCE
