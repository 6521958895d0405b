// The register tiles and the walk over them that the fp32-compute matrix products share (ops/matmul.h's order: one
// fma chain per output element): f32 weights read directly, f16 and bf16 weights widened to fp32 first
// (ops/matmul.cpp, ops/matmul_f16.cpp). Included inside each kernel file's per-target pass (the usual Highway
// "-inl.h" guard).
#if defined(MINIGEN_OPS_MATMUL_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MINIGEN_OPS_MATMUL_TILES_INL_H_
#undef MINIGEN_OPS_MATMUL_TILES_INL_H_
#else
#define MINIGEN_OPS_MATMUL_TILES_INL_H_
#endif

#include <algorithm>
#include <cstddef>

#include "core/assert.h"
#include "core/error.h"
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "ops/count_dispatch.h"
#include "ops/fused_mul_add-inl.h"
#include "ops/matmul_output.h"
#include "ops/packed_matrix.h"

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

// Writes (or adds) a tile's accumulators: out[r][v · kLanes + lane], only the first out_valid output features.
template <int kRows, int kVectors>
HWY_INLINE void store_tile(const hn::Vec<PanelTag> (&acc)[kRows][kVectors], float* out, int out_stride, int out_valid,
                           MatmulOutput mode) {
  const PanelTag d;
  for (int r = 0; r < kRows; ++r) {
    float* out_row = out + static_cast<std::size_t>(r) * out_stride;
    for (int v = 0; v < kVectors; ++v) {
      const int first = v * kLanes;
      if (first >= out_valid) break;
      if (first + kLanes <= out_valid) {
        auto result = acc[r][v];
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

// The register tile: out[r][16p + lane] for kRows rows and kPanels panels, each element one fma chain over
// k = 0 … in_features − 1. weight(panel, k, v) gives vector v of a panel's weights for input k — loaded (f32) or
// widened as it is loaded (f16): the same fmas in the same order either way.
template <int kRows, int kPanels, class Weight>
HWY_INLINE void fma_tile(const float* x, int in_features, const Weight& weight, float* out, int out_stride,
                         int out_valid, MatmulOutput mode) {
  const PanelTag d;
  using V = hn::Vec<PanelTag>;
  constexpr int kVectors = kPanels * kVectorsPerPanel;
  V acc[kRows][kVectors];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) acc[r][v] = hn::Zero(d);
  }
  for (int k = 0; k < in_features; ++k) {
    V w[kVectors];
    for (int p = 0; p < kPanels; ++p) {
      for (int v = 0; v < kVectorsPerPanel; ++v) w[p * kVectorsPerPanel + v] = weight(p, k, v);
    }
    for (int r = 0; r < kRows; ++r) {
      const V xk = hn::Set(d, x[static_cast<std::size_t>(r) * in_features + k]);
      for (int v = 0; v < kVectors; ++v) acc[r][v] = fused_mul_add(xk, w[v], acc[r][v]);
    }
  }
  store_tile<kRows, kVectors>(acc, out, out_stride, out_valid, mode);
}

// f32 panels, `panel_stride` floats apart.
template <int kRows, int kPanels>
HWY_NOINLINE void tile_f32(const float* x, int in_features, const float* panels, std::size_t panel_stride, float* out,
                           int out_stride, int out_valid, MatmulOutput mode) {
  const auto weight = [&](int p, int k, int v) {
    return hn::Load(PanelTag(),
                    panels + p * panel_stride + static_cast<std::size_t>(k) * PackedMatrix::kPanelWidth + v * kLanes);
  };
  fma_tile<kRows, kPanels>(x, in_features, weight, out, out_stride, out_valid, mode);
}

struct NoGroupSetup {
  void operator()(int /*first_panel*/, int /*panels*/) const {}
};

// Output panels [panel_begin, panel_end): rows in blocks of kBlockRows, so a group of kMaxPanels panels stays in L2
// while the block's rows pass; group_setup(first_panel, panels) once per block and group, then tile(rows, panels,
// first_row, first_panel, out_valid) per register tile.
template <int kMaxRows, int kMaxPanels, int kBlockRows = kRowBlock, class Tile, class GroupSetup = NoGroupSetup>
void walk_tiles(int rows, int out_features, int panel_begin, int panel_end, Tile&& tile, GroupSetup group_setup = {}) {
  MINIGEN_ASSERT(0 <= panel_begin && panel_begin <= panel_end &&
                     (panel_end - 1) * PackedMatrix::kPanelWidth < std::max(out_features, 1),
                 "matmul: panels [", panel_begin, ", ", panel_end, ") of a matrix with ", out_features, " outputs");
  for (int row_block = 0; row_block < rows; row_block += kBlockRows) {
    const int block_end = std::min(rows, row_block + kBlockRows);
    for (int p = panel_begin; p < panel_end; p += kMaxPanels) {
      const int group = std::min(kMaxPanels, panel_end - p);
      const int out_valid = std::min(group * PackedMatrix::kPanelWidth, out_features - p * PackedMatrix::kPanelWidth);
      group_setup(p, group);
      for (int r = row_block; r < block_end; r += kMaxRows) {
        dispatch_count<kMaxRows>(block_end - r, [&](auto tile_rows) {
          dispatch_count<kMaxPanels>(group, [&](auto tile_panels) { tile(tile_rows, tile_panels, r, p, out_valid); });
        });
      }
    }
  }
}

// Output panels [panel_begin, panel_end) of a 16-bit weight widened to fp32 panels of `in_features` inputs, one
// group of kTilePanels at a time per block of kBlockRows rows: widen(first_panel, panels, widened, stride) fills the
// scratch, then the f32 tile runs over it with x_row(r) as row r's activations. The widening is paid once per
// group and block instead of once per register tile.
template <int kBlockRows, class RowOf, class Widen>
void walk_widened_panels(float* out, int rows, int in_features, int out_features, int panel_begin, int panel_end,
                         RowOf&& x_row, Widen&& widen, MatmulOutput mode) {
  const std::size_t stride = static_cast<std::size_t>(in_features) * PackedMatrix::kPanelWidth;
  thread_local hwy::AlignedFreeUniquePtr<float[]> scratch;  // per pool thread: each widens its own panels
  thread_local std::size_t capacity = 0;
  if (kTilePanels * stride > capacity) {
    scratch = hwy::AllocateAligned<float>(kTilePanels * stride);
    if (!scratch) throw Error("out of memory widening 16-bit weights");
    capacity = kTilePanels * stride;
  }
  float* widened = scratch.get();
  walk_tiles<kTileRows, kTilePanels, kBlockRows>(
      rows, out_features, panel_begin, panel_end,
      [&](auto tile_rows, auto tile_panels, int r, int p, int valid) {
        tile_f32<decltype(tile_rows)::value, decltype(tile_panels)::value>(
            x_row(r), in_features, widened, stride,
            out + static_cast<std::size_t>(r) * out_features + p * PackedMatrix::kPanelWidth, out_features, valid,
            mode);
      },
      [&](int first_panel, int panels) { widen(first_panel, panels, widened, stride); });
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#endif  // MINIGEN_OPS_MATMUL_TILES_INL_H_ toggle
