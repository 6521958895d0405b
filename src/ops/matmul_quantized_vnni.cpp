#include "ops/matmul_quantized_vnni.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/assert.h"
#include "ops/cpu_kernel_switch.h"
#include "ops/quantized_tile_walk.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// GCC 12 reports the _mm512_undefined_ps() inside its own 512-bit conversion intrinsics as "may be used
// uninitialized" once they are inlined into a function with a target attribute (a false positive of the header).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define MINIGEN_HAVE_VNNI_KERNEL 1
#define MINIGEN_VNNI_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#else
#define MINIGEN_HAVE_VNNI_KERNEL 0
#endif

namespace minigen {
namespace {

#if MINIGEN_HAVE_VNNI_KERNEL

CpuKernelSwitch& kernel_switch() {
  static CpuKernelSwitch kernel(CpuExtension::kAvx512Vnni);
  return kernel;
}

constexpr int kTileRows = 8;
constexpr int kRowBlock = 4 * kTileRows;

// One block's integer sums Σ_k code_w · code_x for the panel's 16 lanes, for kRows rows.
template <int kRows, WeightType kType>
MINIGEN_VNNI_TARGET inline void block_sums(const QuantizedRows& xq, int row0, int b, const uint8_t* group,
                                           __m512i (&isum)[kRows]) {
  for (int r = 0; r < kRows; ++r) isum[r] = _mm512_setzero_si512();
  if constexpr (kType == WeightType::kQ8) {
    // Pair j: 32 bytes, lane i's codes for inputs 2j and 2j + 1, widened to int16 (one int32 lane per output).
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      const __m512i w = _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(group + j * 32)));
      for (int r = 0; r < kRows; ++r) {
        int32_t x_pair;
        std::memcpy(&x_pair, xq.int16_row(row0 + r) + b * kQuantBlock + 2 * j, 4);
        isum[r] = _mm512_dpwssd_epi32(isum[r], w, _mm512_set1_epi32(x_pair));
      }
    }
  } else {
    // Quad q: 32 bytes whose low nibbles are lanes 0–7's codes + 8 for inputs 4q … 4q + 3, and whose high nibbles
    // lanes 8–15's. Broadcast to both halves of a register, the upper half shifted down by 4: one byte per code,
    // lanes 0–15 in order.
    const __m512i mask = _mm512_set1_epi8(0x0f);
    const __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
    for (int q = 0; q < kQuantBlock / 4; ++q) {
      const __m512i nibbles =
          _mm512_broadcast_i64x4(_mm256_load_si256(reinterpret_cast<const __m256i*>(group + q * 32)));
      const __m512i w = _mm512_and_si512(_mm512_srlv_epi16(nibbles, shifts), mask);
      for (int r = 0; r < kRows; ++r) {
        int32_t x_quad;
        std::memcpy(&x_quad, xq.int8_row(row0 + r) + b * kQuantBlock + q * 4, 4);
        isum[r] = _mm512_dpbusd_epi32(isum[r], w, _mm512_set1_epi32(x_quad));
      }
    }
    for (int r = 0; r < kRows; ++r) {  // Σ (c + 8) · x − 8 · Σ x = Σ c · x
      isum[r] = _mm512_sub_epi32(isum[r], _mm512_set1_epi32(8 * xq.sum(row0 + r, b)));
    }
  }
}

template <int kRows, WeightType kType>
MINIGEN_VNNI_TARGET void quantized_tile(const QuantizedRows& xq, int row0, const uint8_t* panel, int blocks,
                                        std::size_t group_bytes, float* out, int out_stride, int out_valid,
                                        MatmulOutput mode) {
  __m512 acc[kRows];
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  for (int b = 0; b < blocks; ++b) {
    const uint8_t* group = panel + b * group_bytes;
    __m512i isum[kRows];
    block_sums<kRows, kType>(xq, row0, b, group, isum);
    const uint8_t* scales = group + group_bytes - PackedMatrix::kScaleBytes;
    const __m512 d_w = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
    for (int r = 0; r < kRows; ++r) {  // acc = fma(float(isum), d_w · d_x, acc), as the other kernels
      const __m512 d = _mm512_mul_ps(d_w, _mm512_set1_ps(xq.scale(row0 + r, b)));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), d, acc[r]);
    }
  }
  const __mmask16 valid = static_cast<__mmask16>((1u << out_valid) - 1u);
  for (int r = 0; r < kRows; ++r) {
    float* out_row = out + static_cast<std::size_t>(r) * out_stride;
    __m512 value = acc[r];
    if (mode == MatmulOutput::kAddTo) value = _mm512_add_ps(_mm512_maskz_loadu_ps(valid, out_row), value);
    _mm512_mask_storeu_ps(out_row, valid, value);
  }
}

template <WeightType kType>
MINIGEN_VNNI_TARGET void panel_range(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                                     int panel_end, MatmulOutput mode) {
  const int out_features = weight.out_features();
  walk_quantized_tiles<kTileRows, kRowBlock>(
      xq.rows, out_features, panel_begin, panel_end, [&](auto rows, int first_row, int panel, int out_valid) {
        quantized_tile<decltype(rows)::value, kType>(
            xq, first_row, weight.quant_panel(panel), weight.blocks(), weight.group_bytes(),
            out + static_cast<std::size_t>(first_row) * out_features + panel * PackedMatrix::kPanelWidth, out_features,
            out_valid, mode);
      });
}

#endif  // MINIGEN_HAVE_VNNI_KERNEL

}  // namespace

bool avx512_vnni_kernel_enabled() {
#if MINIGEN_HAVE_VNNI_KERNEL
  return kernel_switch().enabled();
#else
  return false;
#endif
}

bool set_avx512_vnni_kernel_for_test(bool enabled) {
#if MINIGEN_HAVE_VNNI_KERNEL
  return kernel_switch().set_for_test(enabled);
#else
  static_cast<void>(enabled);
  return false;
#endif
}

void quantized_panels_avx512_vnni(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                                  int panel_end, MatmulOutput mode) {
#if MINIGEN_HAVE_VNNI_KERNEL
  MINIGEN_ASSERT(avx512_vnni_kernel_enabled(), "the AVX-512 VNNI kernel called on a CPU without it");
  if (weight.type() == WeightType::kQ8) {
    panel_range<WeightType::kQ8>(out, xq, weight, panel_begin, panel_end, mode);
  } else {
    panel_range<WeightType::kQ4>(out, xq, weight, panel_begin, panel_end, mode);
  }
#else
  static_cast<void>(out), static_cast<void>(xq), static_cast<void>(weight), static_cast<void>(panel_begin),
      static_cast<void>(panel_end), static_cast<void>(mode);
  MINIGEN_ASSERT(false, "the AVX-512 VNNI kernel is not compiled in this build");
#endif
}

}  // namespace minigen
