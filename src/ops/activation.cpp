#include "ops/activation.h"

#include <cmath>

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/activation.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void silu_mul_simd(float* out, const float* gate, const float* up, int n) {
  const hn::ScalableTag<float> d;
  const int lanes = static_cast<int>(hn::Lanes(d));
  const auto one = hn::Set(d, 1.0f);
  // exp(x) overflows to +inf beyond ~88.7; Highway's Exp is specified up to 104, so clamp there (still +inf).
  const auto exp_limit = hn::Set(d, 100.0f);
  for (int i = 0; i < n; i += lanes) {
    const auto mask = hn::FirstN(d, static_cast<size_t>(n - i));
    const auto g = hn::MaskedLoad(mask, d, gate + i);
    const auto u = hn::MaskedLoad(mask, d, up + i);
    const auto exp_minus_g = hn::Exp(d, hn::Min(hn::Neg(g), exp_limit));
    hn::BlendedStore(hn::Mul(hn::Div(g, hn::Add(one, exp_minus_g)), u), mask, d, out + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(silu_mul_simd);

void silu_mul(float* out, const float* gate, const float* up, int n) {
  HWY_DYNAMIC_DISPATCH(silu_mul_simd)(out, gate, up, n);
}

void silu_mul_reference(float* out, const float* gate, const float* up, int n) {
  for (int i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = (g / (1.0f + std::exp(-g))) * up[i];
  }
}

}  // namespace minigen
#endif  // HWY_ONCE
