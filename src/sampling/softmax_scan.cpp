#include "sampling/softmax_scan.h"

#include <algorithm>
#include <limits>

#include "core/lane_sum.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sampling/softmax_scan.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep — re-includes this file once per SIMD target
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 16 floats per block, as one AVX-512 vector or two AVX2 ones: block element j goes to running sum j.
using FloatTag = hn::CappedTag<float, kLanesInSum>;
constexpr std::size_t kFloatLanes = hn::MaxLanes(FloatTag());
constexpr std::size_t kVectorsPerBlock = kLanesInSum / kFloatLanes;

// Σ transform(x_i) in fp64 in lane_sum.h's order, each transform(x_i) also stored to out when out is not null.
// `pad` is an input whose transform is +0: the last partial block is padded with it and goes through the same
// vector code, so element i lands in running sum i mod 16 whatever n is.
template <class Transform>
double transform_and_sum(const float* x, float* out, std::size_t n, float pad, Transform transform) {
  const FloatTag d;
  HWY_ALIGN double lanes[kLanesInSum] = {};
#if HWY_TARGET == HWY_SCALAR
  (void)pad;
  for (std::size_t i = 0; i < n; ++i) {
    const float value = hn::GetLane(transform(hn::Set(d, x[i])));
    if (out != nullptr) out[i] = value;
    lanes[i % kLanesInSum] += value;
  }
#else
  const hn::Half<FloatTag> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  using DoubleVector = hn::Vec<decltype(dd)>;
  DoubleVector sums[2 * kVectorsPerBlock];
  for (DoubleVector& sum : sums) sum = hn::Zero(dd);
  const auto add_block = [&](const float* block, float* block_out, std::size_t valid) {
    for (std::size_t v = 0; v < kVectorsPerBlock; ++v) {
      const auto value = transform(hn::LoadU(d, block + v * kFloatLanes));
      if (block_out != nullptr && valid == kLanesInSum) {
        hn::StoreU(value, d, block_out + v * kFloatLanes);
      } else if (block_out != nullptr) {  // the padded last block: only its real elements are stored
        HWY_ALIGN float values[kFloatLanes];
        hn::Store(value, d, values);
        for (std::size_t j = 0; j < kFloatLanes && v * kFloatLanes + j < valid; ++j) {
          block_out[v * kFloatLanes + j] = values[j];
        }
      }
      sums[2 * v] = hn::Add(sums[2 * v], hn::PromoteTo(dd, hn::LowerHalf(dh, value)));
      sums[2 * v + 1] = hn::Add(sums[2 * v + 1], hn::PromoteTo(dd, hn::UpperHalf(dh, value)));
    }
  };
  std::size_t i = 0;
  for (; i + kLanesInSum <= n; i += kLanesInSum) add_block(x + i, out != nullptr ? out + i : nullptr, kLanesInSum);
  if (i < n) {
    HWY_ALIGN float block[kLanesInSum];
    std::fill(block, block + kLanesInSum, pad);
    std::copy(x + i, x + n, block);
    add_block(block, out != nullptr ? out + i : nullptr, n - i);
  }
  for (std::size_t v = 0; v < 2 * kVectorsPerBlock; ++v) hn::Store(sums[v], dd, lanes + v * (kFloatLanes / 2));
#endif
  return fold_lanes_pairwise(lanes);
}

double shifted_exp_simd(const float* x, float shift, float* out, std::size_t n) {
  const FloatTag d;
  const auto by = hn::Set(d, shift);
  return transform_and_sum(x, out, n, -std::numeric_limits<float>::infinity(),
                           [&](auto v) { return hn::Exp(d, hn::Sub(v, by)); });
}

double sum_as_double_simd(const float* x, std::size_t n) {
  return transform_and_sum(x, nullptr, n, 0.0f, [](auto v) { return v; });
}

void divide_as_double_simd(const float* x, double divisor, float* out, std::size_t n) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const FloatTag d;
  const hn::Half<FloatTag> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const auto by = hn::Set(dd, divisor);
  constexpr std::size_t kHalf = kFloatLanes / 2;
  for (; i + kFloatLanes <= n; i += kFloatLanes) {
    const auto value = hn::LoadU(d, x + i);
    const auto low = hn::Div(hn::PromoteTo(dd, hn::LowerHalf(dh, value)), by);
    const auto high = hn::Div(hn::PromoteTo(dd, hn::UpperHalf(dh, value)), by);
    hn::StoreU(hn::DemoteTo(dh, low), dh, out + i);
    hn::StoreU(hn::DemoteTo(dh, high), dh, out + i + kHalf);
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(x[i]) / divisor);
}

float largest_value_simd(const float* x, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  float largest = -std::numeric_limits<float>::infinity();
  std::size_t i = 0;
  if (n >= lanes) {
    auto vector_max = hn::LoadU(d, x);
    for (i = lanes; i + lanes <= n; i += lanes) vector_max = hn::Max(vector_max, hn::LoadU(d, x + i));
    largest = hn::GetLane(hn::MaxOfLanes(d, vector_max));
  }
  for (; i < n; ++i) largest = std::max(largest, x[i]);
  return largest;
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(shifted_exp_simd);
HWY_EXPORT(sum_as_double_simd);
HWY_EXPORT(divide_as_double_simd);
HWY_EXPORT(largest_value_simd);

double shifted_exp(const float* x, float shift, float* out, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(shifted_exp_simd)(x, shift, out, n);
}

double sum_as_double(const float* x, std::size_t n) { return HWY_DYNAMIC_DISPATCH(sum_as_double_simd)(x, n); }

void divide_as_double(const float* x, double divisor, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(divide_as_double_simd)(x, divisor, out, n);
}

float largest_value(const float* x, std::size_t n) { return HWY_DYNAMIC_DISPATCH(largest_value_simd)(x, n); }

}  // namespace minigen
#endif  // HWY_ONCE
