#include "ops/matmul_bf16_avx512.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/assert.h"
#include "ops/count_dispatch.h"
#include "ops/cpu_kernel_switch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's own 512-bit intrinsics, as in the VNNI kernel
#endif
#include <immintrin.h>
#define MINIGEN_HAVE_BF16_KERNEL 1
#define MINIGEN_BF16_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512bf16")))
#else
#define MINIGEN_HAVE_BF16_KERNEL 0
#endif

namespace minigen {
namespace {

#if MINIGEN_HAVE_BF16_KERNEL

CpuKernelSwitch& kernel_switch() {
  static CpuKernelSwitch kernel(CpuExtension::kAvx512Bf16);
  return kernel;
}

// A register tile of kTileRows × kTilePanels accumulators, 24 of the 32 registers, as the f32 kernel: each pair
// step loads 4 panels' 64 bytes and broadcasts 6 activation pairs into 24 independent vdpbf16ps chains.
constexpr int kTilePanels = 4;
constexpr int kTileRows = 6;
constexpr int kRowBlock = kTileRows * 8;  // the panel group's weights stay in L2 while this many rows pass

template <int kRows, int kPanels>
MINIGEN_BF16_TARGET void tile(const Bf16Rows& x, int row0, const uint16_t* panels, std::size_t panel_stride, int pairs,
                              float* out, int out_stride, int out_valid, MatmulOutput mode) {
  __m512 acc[kRows][kPanels];
  for (int r = 0; r < kRows; ++r) {
    for (int p = 0; p < kPanels; ++p) acc[r][p] = _mm512_setzero_ps();
  }
  const uint32_t* x_rows[kRows];
  for (int r = 0; r < kRows; ++r) x_rows[r] = x.row(row0 + r);
  for (int j = 0; j < pairs; ++j) {
    __m512bh w[kPanels];
    for (int p = 0; p < kPanels; ++p) {
      w[p] = (__m512bh)_mm512_load_si512(panels + p * panel_stride + static_cast<std::size_t>(j) * 32);
    }
    for (int r = 0; r < kRows; ++r) {
      const __m512bh xj = (__m512bh)_mm512_set1_epi32(static_cast<int>(x_rows[r][j]));
      for (int p = 0; p < kPanels; ++p) acc[r][p] = _mm512_dpbf16_ps(acc[r][p], w[p], xj);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    float* out_row = out + static_cast<std::size_t>(r) * out_stride;
    for (int p = 0; p < kPanels; ++p) {
      const int first = p * 16;
      if (first >= out_valid) break;
      const int valid_here = std::min(16, out_valid - first);
      const __mmask16 valid = static_cast<__mmask16>((1u << valid_here) - 1u);
      __m512 value = acc[r][p];
      if (mode == MatmulOutput::kAddTo) value = _mm512_add_ps(_mm512_maskz_loadu_ps(valid, out_row + first), value);
      _mm512_mask_storeu_ps(out_row + first, valid, value);
    }
  }
}

MINIGEN_BF16_TARGET void panel_range(float* out, const Bf16Rows& x, const PackedMatrix& weight, int panel_begin,
                                     int panel_end, MatmulOutput mode) {
  const int out_features = weight.out_features();
  const std::size_t panel_stride = static_cast<std::size_t>(weight.in_pairs()) * 2 * PackedMatrix::kPanelWidth;
  for (int row_block = 0; row_block < x.rows; row_block += kRowBlock) {
    const int block_end = std::min(x.rows, row_block + kRowBlock);
    for (int p = panel_begin; p < panel_end; p += kTilePanels) {
      const int group = std::min(kTilePanels, panel_end - p);
      const int first_out = p * PackedMatrix::kPanelWidth;
      const int out_valid = std::min(group * PackedMatrix::kPanelWidth, out_features - first_out);
      for (int r = row_block; r < block_end; r += kTileRows) {
        float* out_tile = out + static_cast<std::size_t>(r) * out_features + first_out;
        dispatch_count<kTileRows>(block_end - r, [&](auto rows) {
          dispatch_count<kTilePanels>(group, [&](auto panels) {
            tile<decltype(rows)::value, decltype(panels)::value>(x, r, weight.bf16_panel(p), panel_stride, x.pairs,
                                                                 out_tile, out_features, out_valid, mode);
          });
        });
      }
    }
  }
}

MINIGEN_BF16_TARGET void round_rows(Bf16Rows& out, const float* x, int in_features, int row_begin, int row_end) {
  MINIGEN_ASSERT(out.form == Bf16Rows::Form::kPacked, "the AVX512_BF16 kernel reads packed bf16 rows");
  for (int r = row_begin; r < row_end; ++r) {
    const float* source = x + static_cast<std::size_t>(r) * in_features;
    auto* destination = reinterpret_cast<uint16_t*>(out.row(r));
    const int padded = 2 * out.pairs;
    for (int k = 0; k < padded; k += 32) {
      // vcvtne2ps2bf16 rounds to nearest even and reads a subnormal as zero: float_to_bf16_flush_subnormal.
      const int lo_count = std::clamp(in_features - k, 0, 16), hi_count = std::clamp(in_features - k - 16, 0, 16);
      const __m512 lo = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << lo_count) - 1u), source + k);
      const __m512 hi = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << hi_count) - 1u), source + k + 16);
      const __m512i rounded = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
      const int store_count = std::min(32, padded - k);
      _mm512_mask_storeu_epi16(destination + k, static_cast<__mmask32>((uint64_t{1} << store_count) - 1u), rounded);
    }
  }
}

#endif  // MINIGEN_HAVE_BF16_KERNEL

}  // namespace

bool avx512_bf16_kernel_enabled() {
#if MINIGEN_HAVE_BF16_KERNEL
  return kernel_switch().enabled();
#else
  return false;
#endif
}

bool set_avx512_bf16_kernel_for_test(bool enabled) {
#if MINIGEN_HAVE_BF16_KERNEL
  return kernel_switch().set_for_test(enabled);
#else
  static_cast<void>(enabled);
  return false;
#endif
}

void round_rows_to_bf16_avx512(Bf16Rows& out, const float* x, int in_features, int row_begin, int row_end) {
#if MINIGEN_HAVE_BF16_KERNEL
  MINIGEN_ASSERT(avx512_bf16_kernel_enabled(), "the AVX512_BF16 kernel called on a CPU without it");
  round_rows(out, x, in_features, row_begin, row_end);
#else
  static_cast<void>(out), static_cast<void>(x), static_cast<void>(in_features), static_cast<void>(row_begin),
      static_cast<void>(row_end);
  MINIGEN_ASSERT(false, "the AVX512_BF16 kernel is not compiled in this build");
#endif
}

void bf16_panels_avx512(float* out, const Bf16Rows& x, const PackedMatrix& weight, int panel_begin, int panel_end,
                        MatmulOutput mode) {
#if MINIGEN_HAVE_BF16_KERNEL
  MINIGEN_ASSERT(avx512_bf16_kernel_enabled(), "the AVX512_BF16 kernel called on a CPU without it");
  panel_range(out, x, weight, panel_begin, panel_end, mode);
#else
  static_cast<void>(out), static_cast<void>(x), static_cast<void>(weight), static_cast<void>(panel_begin),
      static_cast<void>(panel_end), static_cast<void>(mode);
  MINIGEN_ASSERT(false, "the AVX512_BF16 kernel is not compiled in this build");
#endif
}

}  // namespace minigen
