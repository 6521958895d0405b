// The matrix product, once as readable scalar loops (the reference) and once as a Highway kernel compiled for every
// x86 SIMD level and picked at run time. Both follow matmul.h's order: one fma chain per output element.
#include "ops/matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/assert.h"
#include "core/profiler.h"
#include "ops/count_dispatch.h"
#include "ops/matmul_quantized.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/matmul.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep — re-includes this file once per SIMD target
#include "hwy/highway.h"
#include "ops/fused_mul_add-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One panel of 16 output features as vectors: one 512-bit vector on AVX-512, two on AVX2, four on SSE4.
using PanelTag = hn::CappedTag<float, PackedMatrix::kPanelWidth>;
constexpr int kLanes = static_cast<int>(hn::MaxLanes(PanelTag()));
constexpr int kVectorsPerPanel = PackedMatrix::kPanelWidth / kLanes;
// A register tile of kTileRows rows × kTilePanels panels of accumulators: 6 × 4 = 24 of AVX-512's 32 registers
// (each k step: 4 weight loads and 6 broadcasts feed 24 independent fma chains); smaller on narrower targets.
constexpr int kTilePanels = std::max(1, 4 / kVectorsPerPanel);
constexpr int kAccumulatorBudget = kLanes >= 16 ? 24 : 12;
constexpr int kTileRows = std::max(1, kAccumulatorBudget / (kTilePanels * kVectorsPerPanel));
// Rows handled per pass over a panel group: the group's weights stay in L2 while this many rows stream past.
constexpr int kRowBlock = kTileRows * 8;

template <typename Weight>
HWY_INLINE hn::Vec<PanelTag> load_weights(const Weight* p) {
  const PanelTag d;
  if constexpr (sizeof(Weight) == 4) {
    return hn::Load(d, p);
  } else {
    // bf16 is the top half of an fp32: widen to 32 bits and shift into place — exact, no rounding.
    const hn::Rebind<uint16_t, PanelTag> d16;
    const hn::Rebind<uint32_t, PanelTag> d32;
    return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(d32, hn::LoadU(d16, p))));
  }
}

// out[r][16p + lane] for kRows rows and kPanels panels, each element one fma chain over k = 0 … in_features − 1.
template <int kRows, int kPanels, typename Weight>
HWY_NOINLINE void tile(const float* x, int in_features, const Weight* panels, std::size_t panel_stride, float* out,
                       int out_stride, int out_valid, MatmulOutput mode) {
  const PanelTag d;
  using V = hn::Vec<PanelTag>;
  V acc[kRows][kPanels * kVectorsPerPanel];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kPanels * kVectorsPerPanel; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int k = 0; k < in_features; ++k) {
    V w[kPanels * kVectorsPerPanel];
    for (int p = 0; p < kPanels; ++p) {
      for (int v = 0; v < kVectorsPerPanel; ++v) {
        w[p * kVectorsPerPanel + v] = load_weights(
            panels + p * panel_stride + static_cast<std::size_t>(k) * PackedMatrix::kPanelWidth + v * kLanes);
      }
    }
    for (int r = 0; r < kRows; ++r) {
      const V xk = hn::Set(d, x[static_cast<std::size_t>(r) * in_features + k]);
      for (int v = 0; v < kPanels * kVectorsPerPanel; ++v) acc[r][v] = fused_mul_add(xk, w[v], acc[r][v]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    float* out_row = out + static_cast<std::size_t>(r) * out_stride;
    for (int v = 0; v < kPanels * kVectorsPerPanel; ++v) {
      const int first = v * kLanes;
      if (first >= out_valid) break;
      if (first + kLanes <= out_valid) {
        V result = acc[r][v];
        if (mode == MatmulOutput::kAddTo) result = hn::Add(hn::LoadU(d, out_row + first), result);
        hn::StoreU(result, d, out_row + first);
      } else {  // the zero-padded end of the last panel: store only the real output features
        HWY_ALIGN float lanes[kLanes];
        hn::Store(acc[r][v], d, lanes);
        for (int i = 0; first + i < out_valid; ++i) {
          out_row[first + i] = mode == MatmulOutput::kAddTo ? out_row[first + i] + lanes[i] : lanes[i];
        }
      }
    }
  }
}

template <int kPanels, typename Weight>
void tile_rows(int rows, const float* x, int in_features, const Weight* panels, std::size_t panel_stride, float* out,
               int out_stride, int out_valid, MatmulOutput mode) {
  dispatch_count<kTileRows>(rows, [&](auto tile_rows) {
    tile<decltype(tile_rows)::value, kPanels>(x, in_features, panels, panel_stride, out, out_stride, out_valid, mode);
  });
}

template <typename Weight>
void panel_range(float* out, const float* x, int rows, int in_features, int out_features, const Weight* weights,
                 int panel_begin, int panel_end, MatmulOutput mode) {
  MINIGEN_ASSERT(0 <= panel_begin && panel_begin <= panel_end &&
                     (panel_end - 1) * PackedMatrix::kPanelWidth < std::max(out_features, 1),
                 "matmul: panels [", panel_begin, ", ", panel_end, ") of a matrix with ", out_features, " outputs");
  const std::size_t panel_stride = static_cast<std::size_t>(in_features) * PackedMatrix::kPanelWidth;
  for (int row_block = 0; row_block < rows; row_block += kRowBlock) {
    const int block_end = std::min(rows, row_block + kRowBlock);
    for (int p = panel_begin; p < panel_end; p += kTilePanels) {
      const int group = std::min(kTilePanels, panel_end - p);
      const int first_out = p * PackedMatrix::kPanelWidth;
      const int out_valid = std::min(group * PackedMatrix::kPanelWidth, out_features - first_out);
      const Weight* panels = weights + p * panel_stride;
      for (int r = row_block; r < block_end; r += kTileRows) {
        const int tile_rows_here = std::min(kTileRows, block_end - r);
        const float* x_tile = x + static_cast<std::size_t>(r) * in_features;
        float* out_tile = out + static_cast<std::size_t>(r) * out_features + first_out;
        dispatch_count<kTilePanels>(group, [&](auto tile_panels) {
          tile_rows<decltype(tile_panels)::value>(tile_rows_here, x_tile, in_features, panels, panel_stride, out_tile,
                                                  out_features, out_valid, mode);
        });
      }
    }
  }
}

void matmul_panels_f32(float* out, const float* x, int rows, int in_features, int out_features, const float* weights,
                       int panel_begin, int panel_end, MatmulOutput mode) {
  panel_range(out, x, rows, in_features, out_features, weights, panel_begin, panel_end, mode);
}

void matmul_panels_bf16(float* out, const float* x, int rows, int in_features, int out_features,
                        const uint16_t* weights, int panel_begin, int panel_end, MatmulOutput mode) {
  panel_range(out, x, rows, in_features, out_features, weights, panel_begin, panel_end, mode);
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(matmul_panels_f32);
HWY_EXPORT(matmul_panels_bf16);

void matmul(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool, MatmulOutput mode) {
  if (rows <= 0 || weight.empty()) return;
  ProfileZone zone(Zone::kMatmul);
  // Every output element is stored while x is still read, so an output that overlaps the input would feed
  // finished sums back into later chains.
  MINIGEN_ASSERT(out != x, "matmul: the output must not be the input");
  MINIGEN_ASSERT(weight.in_features() > 0, "matmul: a ", weight.out_features(), "-output matrix has no inputs");
  MINIGEN_ASSERT(weight.panels() == (weight.out_features() + PackedMatrix::kPanelWidth - 1) / PackedMatrix::kPanelWidth,
                 "matmul: ", weight.panels(), " panels for ", weight.out_features(), " output features");
  if (is_block_quantized(weight.type())) {
    matmul_quantized(out, x, weight, rows, pool, mode);
    return;
  }
  // Threads take contiguous ranges of panels: each streams its own share of the weights, and an output element
  // is always computed whole by one thread.
  pool.parallel_for(weight.panels(), [&](int64_t begin, int64_t end) {
    if (weight.type() == WeightType::kF32) {
      HWY_DYNAMIC_DISPATCH(matmul_panels_f32)
      (out, x, rows, weight.in_features(), weight.out_features(), weight.f32_panel(0), static_cast<int>(begin),
       static_cast<int>(end), mode);
    } else {
      HWY_DYNAMIC_DISPATCH(matmul_panels_bf16)
      (out, x, rows, weight.in_features(), weight.out_features(), weight.bf16_panel(0), static_cast<int>(begin),
       static_cast<int>(end), mode);
    }
  });
}

void matmul_reference(float* out, const float* x, const float* weight, int rows, int in_features, int out_features,
                      MatmulOutput mode) {
  MINIGEN_ASSERT(rows >= 0 && in_features >= 0 && out_features >= 0, "matmul_reference: shape ", rows, "×", in_features,
                 " · ", out_features, "×", in_features, "ᵀ");
  for (int r = 0; r < rows; ++r) {
    const float* x_row = x + static_cast<std::size_t>(r) * in_features;
    for (int o = 0; o < out_features; ++o) {
      const float* w_row = weight + static_cast<std::size_t>(o) * in_features;
      float acc = 0.0f;
      for (int k = 0; k < in_features; ++k) acc = std::fma(x_row[k], w_row[k], acc);
      float& target = out[static_cast<std::size_t>(r) * out_features + o];
      target = mode == MatmulOutput::kAddTo ? target + acc : acc;
    }
  }
}

}  // namespace minigen
#endif  // HWY_ONCE
