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

// A register tile is up to 6 rows × 2 panels (32 output lanes): 12 integer sums and 12 float accumulators of the
// 32 zmm registers. Two panels per tile let each broadcast activation word feed two vpdpwssd/vpdpbusd — with one
// panel every product instruction needed its own broadcast load.
constexpr int kTileRows = 6;
constexpr int kTilePanels = 2;
constexpr int kRowBlock = 4 * kTileRows;

// One block's integer sums Σ_k code_w · code_x for kPanels panels of 16 lanes, for kRows rows; `group[p]` is panel
// p's weight group of this block.
template <int kRows, int kPanels, WeightType kType, ActivationCodes kCodes>
MINIGEN_VNNI_TARGET inline void block_sums(const QuantizedRows& xq, int row0, int b,
                                           const uint8_t* const (&group)[kPanels], __m512i (&isum)[kRows][kPanels]) {
  // The byte products multiply weight codes stored with an offset (q4: + 8; q8 × int8: + 128), so each sum starts
  // at −offset · Σ x, which the products then bring to Σ c · x: Σ (c + o) · x − o · Σ x. Starting there rather than
  // subtracting at the end saves an instruction per accumulator and block; the integers are the same.
  constexpr int32_t kCodeOffset = kType == WeightType::kQ4 ? 8 : kCodes == ActivationCodes::kInt8 ? 128 : 0;
  for (int r = 0; r < kRows; ++r) {
    const __m512i start = _mm512_set1_epi32(-kCodeOffset * xq.sum(row0 + r, b));
    for (int p = 0; p < kPanels; ++p) isum[r][p] = start;
  }
  // The loops over a block are unrolled: rolled, GCC 12 copied every accumulator to another register and back on
  // each pass (measured: 13–19 % of a q8/q4 prefill).
  if constexpr (kType == WeightType::kQ8 && kCodes == ActivationCodes::kInt16) {
    // Pair j: 32 bytes, lane i's codes for inputs 2j and 2j + 1, widened to int16 (one int32 lane per output).
#pragma GCC unroll 16
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      __m512i w[kPanels];
      for (int p = 0; p < kPanels; ++p) {
        w[p] = _mm512_cvtepi8_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(group[p] + j * 32)));
      }
      for (int r = 0; r < kRows; ++r) {
        int32_t x_pair;
        std::memcpy(&x_pair, xq.int16_row(row0 + r) + b * kQuantBlock + 2 * j, 4);
        const __m512i x = _mm512_set1_epi32(x_pair);
        for (int p = 0; p < kPanels; ++p) isum[r][p] = _mm512_dpwssd_epi32(isum[r][p], w[p], x);
      }
    }
  } else if constexpr (kType == WeightType::kQ8) {
    // int8 activations (W8A8). Quad q is pairs 2q and 2q + 1, 64 contiguous bytes: vpermw interleaves their 16-bit
    // words so that 32-bit lane i holds lane i's codes for inputs 4q … 4q + 3, and flipping each byte's top bit
    // makes them code + 128, unsigned, for vpdpbusd (unsigned × signed bytes, 4 products into int32, no saturation).
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                                6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i top_bit = _mm512_set1_epi8(static_cast<char>(0x80));
#pragma GCC unroll 8
    for (int q = 0; q < kQuantBlock / 4; ++q) {
      __m512i w[kPanels];
      for (int p = 0; p < kPanels; ++p) {
        const __m512i pairs = _mm512_loadu_si512(group[p] + q * 64);  // groups are 544 bytes: 32-aligned only
        w[p] = _mm512_xor_si512(_mm512_permutexvar_epi16(interleave, pairs), top_bit);
      }
      for (int r = 0; r < kRows; ++r) {
        int32_t x_quad;
        std::memcpy(&x_quad, xq.int8_row(row0 + r) + b * kQuantBlock + q * 4, 4);
        const __m512i x = _mm512_set1_epi32(x_quad);
        for (int p = 0; p < kPanels; ++p) isum[r][p] = _mm512_dpbusd_epi32(isum[r][p], w[p], x);
      }
    }
  } else {
    // Quad q: 32 bytes whose low nibbles are lanes 0–7's codes + 8 for inputs 4q … 4q + 3, and whose high nibbles
    // lanes 8–15's. Broadcast to both halves of a register, the upper half shifted down by 4: one byte per code,
    // lanes 0–15 in order.
    const __m512i mask = _mm512_set1_epi8(0x0f);
    const __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
#pragma GCC unroll 8
    for (int q = 0; q < kQuantBlock / 4; ++q) {
      __m512i w[kPanels];
      for (int p = 0; p < kPanels; ++p) {
        const __m512i nibbles =
            _mm512_broadcast_i64x4(_mm256_load_si256(reinterpret_cast<const __m256i*>(group[p] + q * 32)));
        w[p] = _mm512_and_si512(_mm512_srlv_epi16(nibbles, shifts), mask);
      }
      for (int r = 0; r < kRows; ++r) {
        int32_t x_quad;
        std::memcpy(&x_quad, xq.int8_row(row0 + r) + b * kQuantBlock + q * 4, 4);
        const __m512i x = _mm512_set1_epi32(x_quad);
        for (int p = 0; p < kPanels; ++p) isum[r][p] = _mm512_dpbusd_epi32(isum[r][p], w[p], x);
      }
    }
  }
}

// Rows [row0, row0 + kRows) × panels [first_panel, first_panel + kPanels); the last panel has out_valid_last real
// lanes (fewer than 16 only in the matrix's zero-padded last panel).
template <int kRows, int kPanels, WeightType kType, ActivationCodes kCodes>
MINIGEN_VNNI_TARGET void quantized_tile(const QuantizedRows& xq, int row0, const PackedMatrix& weight, int first_panel,
                                        float* out, int out_stride, int out_valid_last, MatmulOutput mode) {
  const std::size_t group_bytes = weight.group_bytes();
  const uint8_t* panel[kPanels];
  for (int p = 0; p < kPanels; ++p) panel[p] = weight.quant_panel(first_panel + p);
  __m512 acc[kRows][kPanels];
  for (int r = 0; r < kRows; ++r) {
    for (int p = 0; p < kPanels; ++p) acc[r][p] = _mm512_setzero_ps();
  }
  for (int b = 0; b < weight.blocks(); ++b) {
    const uint8_t* group[kPanels];
    for (int p = 0; p < kPanels; ++p) group[p] = panel[p] + b * group_bytes;
    __m512i isum[kRows][kPanels];
    block_sums<kRows, kPanels, kType, kCodes>(xq, row0, b, group, isum);
    __m512 d_w[kPanels];
    for (int p = 0; p < kPanels; ++p) {
      const uint8_t* scales = group[p] + group_bytes - PackedMatrix::kScaleBytes;
      d_w[p] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
    }
    for (int r = 0; r < kRows; ++r) {  // acc = fma(float(isum), d_w · d_x, acc), as the other kernels
      const __m512 d_x = _mm512_set1_ps(xq.scale(row0 + r, b));
      for (int p = 0; p < kPanels; ++p) {
        acc[r][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r][p]), _mm512_mul_ps(d_w[p], d_x), acc[r][p]);
      }
    }
  }
  for (int p = 0; p < kPanels; ++p) {
    const int valid = p == kPanels - 1 ? out_valid_last : PackedMatrix::kPanelWidth;
    const __mmask16 lanes = static_cast<__mmask16>((1u << valid) - 1u);
    for (int r = 0; r < kRows; ++r) {
      float* out_row = out + static_cast<std::size_t>(r) * out_stride + p * PackedMatrix::kPanelWidth;
      __m512 value = acc[r][p];
      if (mode == MatmulOutput::kAddTo) value = _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, out_row), value);
      _mm512_mask_storeu_ps(out_row, lanes, value);
    }
  }
}

template <WeightType kType, ActivationCodes kCodes>
MINIGEN_VNNI_TARGET void panel_range(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                                     int panel_end, MatmulOutput mode) {
  const int out_features = weight.out_features();
  walk_quantized_tiles<kTileRows, kRowBlock, kTilePanels>(
      xq.rows, out_features, panel_begin, panel_end,
      [&](auto rows, auto panels, int first_row, int first_panel, int out_valid_last) {
        quantized_tile<decltype(rows)::value, decltype(panels)::value, kType, kCodes>(
            xq, first_row, weight, first_panel,
            out + static_cast<std::size_t>(first_row) * out_features + first_panel * PackedMatrix::kPanelWidth,
            out_features, out_valid_last, mode);
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
  if (weight.type() == WeightType::kQ4) {
    panel_range<WeightType::kQ4, ActivationCodes::kInt8>(out, xq, weight, panel_begin, panel_end, mode);
  } else if (xq.codes == ActivationCodes::kInt8) {
    panel_range<WeightType::kQ8, ActivationCodes::kInt8>(out, xq, weight, panel_begin, panel_end, mode);
  } else {
    panel_range<WeightType::kQ8, ActivationCodes::kInt16>(out, xq, weight, panel_begin, panel_end, mode);
  }
#else
  static_cast<void>(out), static_cast<void>(xq), static_cast<void>(weight), static_cast<void>(panel_begin),
      static_cast<void>(panel_end), static_cast<void>(mode);
  MINIGEN_ASSERT(false, "the AVX-512 VNNI kernel is not compiled in this build");
#endif
}

}  // namespace minigen
