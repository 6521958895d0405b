#include "ops/rmsnorm.h"

#include <cmath>

#include "core/lane_sum.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/rmsnorm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/fused_mul_add-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void rmsnorm_simd(float* out, const float* x, const float* weight, int n, float eps) {
  using Tag = hn::CappedTag<float, kLanesInSum>;
  const Tag d;
  constexpr int kLanes = static_cast<int>(hn::MaxLanes(Tag()));
  constexpr int kVectors = kLanesInSum / kLanes;
  using V = hn::Vec<Tag>;
  V acc[kVectors];
  for (auto& a : acc) a = hn::Zero(d);
  // Element i lands in lane i mod 16; the ragged end is loaded under a mask, adding exact zeros to the other lanes.
  for (int i = 0; i < n; i += kLanesInSum) {
    for (int v = 0; v < kVectors; ++v) {
      const int first = i + v * kLanes;
      if (first >= n) break;
      const V xv = first + kLanes <= n ? hn::LoadU(d, x + first)
                                       : hn::MaskedLoad(hn::FirstN(d, static_cast<size_t>(n - first)), d, x + first);
      acc[v] = fused_mul_add(xv, xv, acc[v]);
    }
  }
  HWY_ALIGN float lanes[kLanesInSum];
  for (int v = 0; v < kVectors; ++v) hn::Store(acc[v], d, lanes + v * kLanes);
  const float mean_square = fold_lanes_pairwise(lanes) / static_cast<float>(n);
  const float inverse_rms = 1.0f / std::sqrt(mean_square + eps);
  const V scale = hn::Set(d, inverse_rms);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    hn::StoreU(hn::Mul(hn::LoadU(d, weight + i), hn::Mul(hn::LoadU(d, x + i), scale)), d, out + i);
  }
  for (; i < n; ++i) out[i] = weight[i] * (x[i] * inverse_rms);
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(rmsnorm_simd);

void rmsnorm(float* out, const float* x, const float* weight, int n, float eps) {
  HWY_DYNAMIC_DISPATCH(rmsnorm_simd)(out, x, weight, n, eps);
}

void rmsnorm_reference(float* out, const float* x, const float* weight, int n, float eps) {
  float lanes[kLanesInSum] = {};
  for (int i = 0; i < n; ++i) lanes[i % kLanesInSum] = std::fma(x[i], x[i], lanes[i % kLanesInSum]);
  const float mean_square = fold_lanes_pairwise(lanes) / static_cast<float>(n);
  const float inverse_rms = 1.0f / std::sqrt(mean_square + eps);
  for (int i = 0; i < n; ++i) out[i] = weight[i] * (x[i] * inverse_rms);
}

}  // namespace minigen
#endif  // HWY_ONCE
