// The f16 matrix product (ops/matmul_f16.h) as a Highway kernel compiled for every x86 SIMD level.
#include "ops/matmul_f16.h"

#include <cstddef>
#include <cstdint>

#include "core/assert.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/matmul_f16.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep — re-includes this file once per SIMD target
#include "hwy/highway.h"
#include "ops/fused_mul_add-inl.h"
#include "ops/matmul_tiles-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using HalfTag = hn::Rebind<hwy::float16_t, PanelTag>;

// Weights [k][v · kLanes, +kLanes) of an f16 panel, widened to fp32.
HWY_INLINE hn::Vec<PanelTag> load_widened(const uint16_t* panel, int k, int v) {
  const auto* halves = reinterpret_cast<const hwy::float16_t*>(
      panel + static_cast<std::size_t>(k) * PackedMatrix::kPanelWidth + v * kLanes);
  return hn::PromoteTo(PanelTag(), hn::LoadU(HalfTag(), halves));
}

// The f32 tile with each weight vector widened as it is loaded.
template <int kRows, int kPanels>
HWY_NOINLINE void tile_f16(const float* x, int in_features, const uint16_t* panels, std::size_t panel_stride,
                           float* out, int out_stride, int out_valid, MatmulOutput mode) {
  const auto weight = [&](int p, int k, int v) { return load_widened(panels + p * panel_stride, k, v); };
  fma_tile<kRows, kPanels>(x, in_features, weight, out, out_stride, out_valid, mode);
}

// f16 panels [first_panel, first_panel + panels) as fp32 panels, `stride` floats apart.
void widen_f16_panels(const PackedMatrix& weight, int first_panel, int panels, float* widened, std::size_t stride) {
  const PanelTag d;
  const int in_features = weight.in_features();
  for (int p = 0; p < panels; ++p) {
    const uint16_t* panel = weight.f16_panel(first_panel + p);
    float* destination = widened + static_cast<std::size_t>(p) * stride;
    for (int k = 0; k < in_features; ++k) {
      for (int v = 0; v < kVectorsPerPanel; ++v) {
        hn::Store(load_widened(panel, k, v), d,
                  destination + static_cast<std::size_t>(k) * PackedMatrix::kPanelWidth + v * kLanes);
      }
    }
  }
}

// From this many rows on, the widening is shared by the rows of a block. Measured with BM_Matmul/f16 and
// BM_Decode/f16 (minimind2 shapes, 2 threads, Zen 5): on AVX-512 the in-tile kernel runs at the f32 kernel's rate
// for every row count (the conversions hide behind the fmas), on AVX2 it runs at half that rate from 8 rows on.
constexpr int kF16WidenRows = HWY_TARGET == HWY_AVX2 ? 2 : 1 << 30;
constexpr int kF16WidenedBlockRows = 16 * kTileRows;

void matmul_panels_f16(float* out, const float* x, int rows, const PackedMatrix& weight, int panel_begin, int panel_end,
                       MatmulOutput mode) {
  const int in_features = weight.in_features();
  const int out_features = weight.out_features();
  if (rows >= kF16WidenRows) {
    walk_widened_panels<kF16WidenedBlockRows>(
        out, rows, in_features, out_features, panel_begin, panel_end,
        [&](int r) { return x + static_cast<std::size_t>(r) * in_features; },
        [&](int first_panel, int panels, float* widened, std::size_t stride) {
          widen_f16_panels(weight, first_panel, panels, widened, stride);
        },
        mode);
    return;
  }
  const std::size_t panel_stride = static_cast<std::size_t>(in_features) * PackedMatrix::kPanelWidth;
  walk_tiles<kTileRows, kTilePanels>(
      rows, out_features, panel_begin, panel_end, [&](auto tile_rows, auto tile_panels, int r, int p, int valid) {
        tile_f16<decltype(tile_rows)::value, decltype(tile_panels)::value>(
            x + static_cast<std::size_t>(r) * in_features, in_features, weight.f16_panel(p), panel_stride,
            out + static_cast<std::size_t>(r) * out_features + p * PackedMatrix::kPanelWidth, out_features, valid,
            mode);
      });
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(matmul_panels_f16);

void matmul_f16(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool, MatmulOutput mode) {
  MINIGEN_ASSERT(weight.type() == WeightType::kF16, "matmul_f16: a ", weight_type_name(weight.type()), " matrix");
  // As the f32 product: threads take contiguous ranges of panels, each output element computed whole by one.
  pool.parallel_for(weight.panels(), [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(matmul_panels_f16)
    (out, x, rows, weight, static_cast<int>(begin), static_cast<int>(end), mode);
  });
}

}  // namespace minigen
#endif  // HWY_ONCE
