// The matrix product, once as readable scalar loops (the reference) and once as a Highway kernel compiled for every
// x86 SIMD level and picked at run time. Both follow matmul.h's order: one fma chain per output element (for bf16
// weights, ops/matmul_bf16.h's order over pairs of inputs).
#include "ops/matmul.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/assert.h"
#include "core/error.h"
#include "core/profiler.h"
#include "ops/count_dispatch.h"
#include "ops/float_formats.h"
#include "ops/matmul_bf16.h"
#include "ops/matmul_bf16_avx512.h"
#include "ops/matmul_f16.h"
#include "ops/matmul_quantized.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/matmul.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep — re-includes this file once per SIMD target
#include "hwy/highway.h"
#include "ops/fused_mul_add-inl.h"
#include "ops/matmul_tiles-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// bf16 keeps two widened halves of a weight vector and two broadcasts per row live (tile_bf16): fewer rows. On
// AVX2, 2 rows × 2 panels measured best (BM_Matmul, BM_Decode M32) against 3 × 1, 4 × 1 and 1 × 2.
constexpr int kBf16TileRows = kLanes >= 16 ? 4 : (kLanes >= 8 ? 2 : 1);
constexpr int kBf16TilePanels = kTilePanels;
// bf16 (ops/matmul_bf16.h): per pair of inputs, the odd one's fma then the even one's. A 32-bit word of a panel
// row holds one lane's pair; masking the low half off gives the odd weight as an fp32, shifting left by 16 the even
// one — exact. The activations come widened (Bf16Rows::kWidened), so each is one broadcast from memory. The loop
// works through one weight vector at a time so that its two halves, the rows' activations and the accumulators fit
// the register file (AVX2: 2 rows × 4 vectors = 8 + 2 + 4 of 16).
template <int kRows, int kPanels>
HWY_NOINLINE void tile_bf16(const Bf16Rows& x, int row0, const uint16_t* panels, std::size_t panel_stride, float* out,
                            int out_stride, int out_valid, MatmulOutput mode) {
  const PanelTag d;
  const hn::RebindToUnsigned<PanelTag> du;
  using V = hn::Vec<PanelTag>;
  constexpr int kVectors = kPanels * kVectorsPerPanel;
  V acc[kRows][kVectors];
  for (int r = 0; r < kRows; ++r) {
    for (int v = 0; v < kVectors; ++v) acc[r][v] = hn::Zero(d);
  }
  const float* x_rows[kRows];
  for (int r = 0; r < kRows; ++r) x_rows[r] = x.widened_row(row0 + r);
  const auto odd_mask = hn::Set(du, 0xffff0000u);
  for (int j = 0; j < x.pairs; ++j) {
    V x_odd[kRows], x_even[kRows];
    for (int r = 0; r < kRows; ++r) {  // widened rows hold each pair odd input first
      x_odd[r] = hn::Set(d, x_rows[r][2 * j]);
      x_even[r] = hn::Set(d, x_rows[r][2 * j + 1]);
    }
    for (int p = 0; p < kPanels; ++p) {
      for (int v = 0; v < kVectorsPerPanel; ++v) {
        const uint16_t* lanes =
            panels + p * panel_stride + static_cast<std::size_t>(j) * 2 * PackedMatrix::kPanelWidth + 2 * v * kLanes;
        const auto words = hn::Load(du, reinterpret_cast<const uint32_t*>(lanes));
        const V odd = hn::BitCast(d, hn::And(words, odd_mask));
        const V even = hn::BitCast(d, hn::ShiftLeft<16>(words));
        const int index = p * kVectorsPerPanel + v;
        for (int r = 0; r < kRows; ++r) {
          acc[r][index] = fused_mul_add(x_odd[r], odd, acc[r][index]);
          acc[r][index] = fused_mul_add(x_even[r], even, acc[r][index]);
        }
      }
    }
  }
  store_tile<kRows, kVectors>(acc, out, out_stride, out_valid, mode);
}

void matmul_panels_f32(float* out, const float* x, int rows, int in_features, int out_features, const float* weights,
                       int panel_begin, int panel_end, MatmulOutput mode) {
  const std::size_t panel_stride = static_cast<std::size_t>(in_features) * PackedMatrix::kPanelWidth;
  walk_tiles<kTileRows, kTilePanels>(
      rows, out_features, panel_begin, panel_end, [&](auto tile_rows, auto tile_panels, int r, int p, int valid) {
        tile_f32<decltype(tile_rows)::value, decltype(tile_panels)::value>(
            x + static_cast<std::size_t>(r) * in_features, in_features, weights + p * panel_stride, panel_stride,
            out + static_cast<std::size_t>(r) * out_features + p * PackedMatrix::kPanelWidth, out_features, valid,
            mode);
      });
}

// On AVX2 the pair kernel spends a mask and a shift per weight vector on 2 rows × 2 fmas, and ran ~14 % below the
// fp32 kernel's rate (BM_Matmul, BM_Decode M32); from kBf16WidenRows rows on, each group of panels is widened to fp32
// once per block of kBf16WidenedBlockRows rows instead and the fp32 tile runs over it — pairs stored odd input
// first in both operands, so its k order is the pair order: the same fmas in the same order, the same bits as the
// pair kernel.
constexpr bool kWidenBf16Panels = HWY_TARGET == HWY_AVX2;
constexpr int kBf16WidenRows = 16;
constexpr int kBf16WidenedBlockRows = 16 * kTileRows;

// bf16 panels [first_panel, first_panel + panels) as fp32 panels of 2 · pairs inputs, one after another `stride`
// floats apart, each pair odd input first as in the widened activations: row 2j holds input 2j + 1's weight (the pair
// word with its low half cleared), row 2j + 1 input 2j's (the word shifted left by 16) — exact, as in tile_bf16.
void widen_bf16_panels(const PackedMatrix& weight, int pairs, int first_panel, int panels, float* widened,
                       std::size_t stride) {
  const PanelTag d;
  const hn::RebindToUnsigned<PanelTag> du;
  const auto odd_mask = hn::Set(du, 0xffff0000u);
  for (int p = 0; p < panels; ++p) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(weight.bf16_panel(first_panel + p));
    float* panel = widened + static_cast<std::size_t>(p) * stride;
    for (int j = 0; j < pairs; ++j) {
      for (int v = 0; v < kVectorsPerPanel; ++v) {
        const auto pair_words =
            hn::Load(du, words + static_cast<std::size_t>(j) * PackedMatrix::kPanelWidth + v * kLanes);
        float* odd_row = panel + static_cast<std::size_t>(2 * j) * PackedMatrix::kPanelWidth + v * kLanes;
        hn::Store(hn::BitCast(d, hn::And(pair_words, odd_mask)), d, odd_row);
        hn::Store(hn::BitCast(d, hn::ShiftLeft<16>(pair_words)), d, odd_row + PackedMatrix::kPanelWidth);
      }
    }
  }
}

void bf16_panels_widened(float* out, const Bf16Rows& x, const PackedMatrix& weight, int panel_begin, int panel_end,
                         MatmulOutput mode) {
  walk_widened_panels<kBf16WidenedBlockRows>(
      out, x.rows, 2 * x.pairs, weight.out_features(), panel_begin, panel_end,  // the widened rows, pad input included
      [&](int r) { return x.widened_row(r); },
      [&](int first_panel, int panels, float* widened, std::size_t stride) {
        widen_bf16_panels(weight, x.pairs, first_panel, panels, widened, stride);
      },
      mode);
}

// Which kernel runs is decided once per product, by the form bf16_rows_form_simd gave the activations (and on AVX2
// by the row count).
void matmul_panels_bf16(float* out, const Bf16Rows& x, const PackedMatrix& weight, int panel_begin, int panel_end,
                        MatmulOutput mode) {
  if (x.form == Bf16Rows::Form::kPacked) return bf16_panels_avx512(out, x, weight, panel_begin, panel_end, mode);
  if (kWidenBf16Panels && x.rows >= kBf16WidenRows) {
    return bf16_panels_widened(out, x, weight, panel_begin, panel_end, mode);
  }
  const int out_features = weight.out_features();
  const std::size_t panel_stride = static_cast<std::size_t>(x.pairs) * 2 * PackedMatrix::kPanelWidth;
  walk_tiles<kBf16TileRows, kBf16TilePanels>(
      x.rows, out_features, panel_begin, panel_end, [&](auto tile_rows, auto tile_panels, int r, int p, int valid) {
        tile_bf16<decltype(tile_rows)::value, decltype(tile_panels)::value>(
            x, r, weight.bf16_panel(p), panel_stride,
            out + static_cast<std::size_t>(r) * out_features + p * PackedMatrix::kPanelWidth, out_features, valid,
            mode);
      });
}

// Adjacent lanes swapped (0 ↔ 1, 2 ↔ 3, …); a one-lane vector (the scalar target) has no pair to swap, so its
// rounding loop leaves every element to the loop after it.
template <class V>
HWY_INLINE V swap_pairs(V v) {
#if HWY_TARGET == HWY_SCALAR
  return v;
#else
  return hn::Shuffle2301(v);
#endif
}

// Rows of x rounded to bf16 in the form this target's kernel reads (Bf16Rows::Form): bits + 0x7fff + the lowest kept
// bit rounds to nearest even, as float_to_bf16_flush_subnormal; NaN is quieted, a subnormal becomes a signed zero.
void round_rows_to_bf16_simd(Bf16Rows& x, const float* source, int in_features, int row_begin, int row_end) {
  if (x.form == Bf16Rows::Form::kPacked) return round_rows_to_bf16_avx512(x, source, in_features, row_begin, row_end);
  const hn::ScalableTag<uint32_t> du;
  const std::size_t lanes = hn::Lanes(du);
  const auto sign = hn::Set(du, 0x80000000u), exponent = hn::Set(du, 0x7f800000u), upper = hn::Set(du, 0xffff0000u);
  const auto abs_mask = hn::Set(du, 0x7fffffffu), quiet = hn::Set(du, 0x00400000u), bias = hn::Set(du, 0x7fffu);
  const auto one = hn::Set(du, 1u);
  for (int r = row_begin; r < row_end; ++r) {
    const uint32_t* bits = reinterpret_cast<const uint32_t*>(source + static_cast<std::size_t>(r) * in_features);
    uint32_t* destination = x.row(r);
    const std::size_t count = static_cast<std::size_t>(in_features);
    std::size_t k = 0;
    for (; lanes >= 2 && k + lanes <= count; k += lanes) {
      const auto v = hn::LoadU(du, bits + k);
      const auto nearest = hn::And(hn::Add(v, hn::Add(bias, hn::And(hn::ShiftRight<16>(v), one))), upper);
      const auto nan = hn::And(hn::Or(v, quiet), upper);
      auto rounded = hn::IfThenElse(hn::Gt(hn::And(v, abs_mask), exponent), nan, nearest);
      rounded = hn::IfThenElse(hn::Eq(hn::And(v, exponent), hn::Zero(du)), hn::And(v, sign), rounded);
      hn::StoreU(swap_pairs(rounded), du, destination + k);  // k is even: whole pairs, odd input first
    }
    for (; k < count; ++k) {
      destination[k ^ 1] = static_cast<uint32_t>(float_to_bf16_flush_subnormal(std::bit_cast<float>(bits[k]))) << 16;
    }
    if (count % 2 != 0) destination[count ^ 1] = 0;
  }
}

// The one place the bf16 kernel is chosen: packed pairs for vdpbf16ps on the AVX-512 target of a CPU with
// AVX512_BF16 (ops/matmul_bf16_avx512.h), widened values for this target's own kernel everywhere else.
Bf16Rows::Form bf16_rows_form_simd() {
#if HWY_TARGET == HWY_AVX3
  if (avx512_bf16_kernel_enabled()) return Bf16Rows::Form::kPacked;
#endif
  return Bf16Rows::Form::kWidened;
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(matmul_panels_f32);
HWY_EXPORT(matmul_panels_bf16);
HWY_EXPORT(round_rows_to_bf16_simd);
HWY_EXPORT(bf16_rows_form_simd);

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
  if (weight.type() == WeightType::kBF16) {
    matmul_bf16(out, x, weight, rows, pool, mode);
    return;
  }
  if (weight.type() == WeightType::kF16) {
    matmul_f16(out, x, weight, rows, pool, mode);
    return;
  }
  // Threads take contiguous ranges of panels: each streams its own share of the weights, and an output element
  // is always computed whole by one thread.
  pool.parallel_for(weight.panels(), [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(matmul_panels_f32)
    (out, x, rows, weight.in_features(), weight.out_features(), weight.f32_panel(0), static_cast<int>(begin),
     static_cast<int>(end), mode);
  });
}

void matmul_bf16(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool,
                 MatmulOutput mode) {
  // One scratch per calling thread, as matmul_quantized's (the lambdas capture a reference to it).
  thread_local Bf16Rows scratch;
  Bf16Rows& rounded = scratch;
  round_rows_for_bf16_kernel(rounded, x, rows, weight.in_features());
  pool.parallel_for(weight.panels(), [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(matmul_panels_bf16)
    (out, rounded, weight, static_cast<int>(begin), static_cast<int>(end), mode);
  });
}

void round_rows_for_bf16_kernel(Bf16Rows& out, const float* x, int rows, int in_features) {
  prepare_bf16_rows(out, rows, in_features, HWY_DYNAMIC_DISPATCH(bf16_rows_form_simd)());
  HWY_DYNAMIC_DISPATCH(round_rows_to_bf16_simd)(out, x, in_features, 0, rows);
}

void prepare_bf16_rows(Bf16Rows& out, int rows, int in_features, Bf16Rows::Form form) {
  MINIGEN_ASSERT(rows >= 0 && in_features > 0, "prepare_bf16_rows: ", rows, " rows of ", in_features);
  out.rows = rows;
  out.pairs = (in_features + 1) / 2;
  out.form = form;
  const std::size_t needed = static_cast<std::size_t>(rows) * out.row_words();
  if (needed > out.capacity) {
    out.words = hwy::AllocateAligned<uint32_t>(needed);
    if (!out.words) throw Error("out of memory rounding activations to bf16");
    out.capacity = needed;
  }
}

void round_rows_to_bf16(Bf16Rows& out, const float* x, int in_features, int row_begin, int row_end) {
  const int padded = 2 * out.pairs;
  for (int r = row_begin; r < row_end; ++r) {
    const float* source = x + static_cast<std::size_t>(r) * in_features;
    uint32_t* destination = out.row(r);
    for (int k = 0; k < padded; ++k) {
      const uint32_t bf16 = k < in_features ? float_to_bf16_flush_subnormal(source[k]) : 0;
      if (out.form == Bf16Rows::Form::kWidened) {
        destination[k ^ 1] = bf16 << 16;  // each pair odd input first
      } else {
        destination[k / 2] = k % 2 == 0 ? bf16 : destination[k / 2] | bf16 << 16;
      }
    }
  }
}

void matmul_reference_bf16(float* out, const float* x, const PackedMatrix& weight, int rows, MatmulOutput mode) {
  MINIGEN_ASSERT(weight.type() == WeightType::kBF16, "matmul_reference_bf16: a ", weight_type_name(weight.type()),
                 " matrix");
  const int in_features = weight.in_features();
  const auto rounded = [](float value) { return bf16_to_float(float_to_bf16_flush_subnormal(value)); };
  for (int r = 0; r < rows; ++r) {
    const float* x_row = x + static_cast<std::size_t>(r) * in_features;
    for (int o = 0; o < weight.out_features(); ++o) {
      float acc = 0.0f;
      for (int k = 0; k < in_features; k += 2) {
        const bool has_odd = k + 1 < in_features;  // an odd in_features ends with a zero pad input
        acc = std::fma(has_odd ? rounded(x_row[k + 1]) : 0.0f, has_odd ? weight.at(o, k + 1) : 0.0f, acc);
        acc = std::fma(rounded(x_row[k]), weight.at(o, k), acc);
      }
      float& target = out[static_cast<std::size_t>(r) * weight.out_features() + o];
      target = mode == MatmulOutput::kAddTo ? target + acc : acc;
    }
  }
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
