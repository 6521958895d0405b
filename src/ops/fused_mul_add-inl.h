// fused_mul_add(mul, x, add) = mul · x + add rounded once, in every Highway target. hn::MulAdd is a fused
// multiply-add where the target has one (AVX2, AVX-512) but two roundings in the portable fallbacks (HWY_SCALAR,
// HWY_EMU128), whereas the scalar references use std::fma: without this, a CPU without FMA would not give the
// reference's bits. Included inside each kernel file's per-target pass (the usual Highway "-inl.h" guard).
#if defined(MINIGEN_OPS_FUSED_MUL_ADD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MINIGEN_OPS_FUSED_MUL_ADD_INL_H_
#undef MINIGEN_OPS_FUSED_MUL_ADD_INL_H_
#else
#define MINIGEN_OPS_FUSED_MUL_ADD_INL_H_
#endif

#include <cmath>
#include <cstddef>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {

template <class V>
HWY_INLINE V fused_mul_add(V mul, V x, V add) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::DFromV<V> d;
  constexpr std::size_t kLanes = hn::MaxLanes(d);
  HWY_ALIGN float m[kLanes], v[kLanes], a[kLanes];
  hn::Store(mul, d, m);
  hn::Store(x, d, v);
  hn::Store(add, d, a);
  for (std::size_t i = 0; i < kLanes; ++i) a[i] = std::fma(m[i], v[i], a[i]);
  return hn::Load(d, a);
#else
  return hwy::HWY_NAMESPACE::MulAdd(mul, x, add);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#endif  // MINIGEN_OPS_FUSED_MUL_ADD_INL_H_ toggle
