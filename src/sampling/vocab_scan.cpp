#include "sampling/vocab_scan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/assert.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sampling/vocab_scan.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep — re-includes this file once per SIMD target
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr float kMinusInfinitySimd = -std::numeric_limits<float>::infinity();

bool any_nan_simd(const float* values, std::size_t size) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= size; i += lanes) {
    if (!hn::AllFalse(d, hn::IsNaN(hn::LoadU(d, values + i)))) return true;
  }
  for (; i < size; ++i) {
    if (std::isnan(values[i])) return true;
  }
  return false;
}

void divide_all_simd(float* values, std::size_t size, float divisor) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto by = hn::Set(d, divisor);
  std::size_t i = 0;
  for (; i + lanes <= size; i += lanes) hn::StoreU(hn::Div(hn::LoadU(d, values + i), by), d, values + i);
  for (; i < size; ++i) values[i] = values[i] / divisor;
}

void remove_below_simd(float* values, std::size_t size, float bound) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto bar = hn::Set(d, bound);
  const auto removed = hn::Set(d, kMinusInfinitySimd);
  std::size_t i = 0;
  for (; i + lanes <= size; i += lanes) {
    const auto v = hn::LoadU(d, values + i);
    hn::StoreU(hn::IfThenElse(hn::Lt(v, bar), removed, v), d, values + i);
  }
  for (; i < size; ++i) values[i] = values[i] < bound ? kMinusInfinitySimd : values[i];
}

// Two passes. The first takes the largest value of each vector: those are distinct entries of the row, so the k-th
// largest of them is a lower bound of the row's k-th largest. The second packs every value at or above that bound
// (usually little more than k of them) and nth_element picks the k-th among those. Both passes are one vector
// operation per vector of logits; top-k 50 over 6,400 logits went from 13 µs (a buffer refilled as a rising bar was
// passed, value by value) to a few.
float kth_largest_simd(const float* values, std::size_t size, std::size_t k) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t vectors = size / lanes;
  thread_local std::vector<float> picked;  // per thread, reused: a row is sampled start to finish on one thread
  picked.clear();
  float bound = kMinusInfinitySimd;
  if (vectors >= k) {
    picked.resize(vectors);
    for (std::size_t v = 0; v < vectors; ++v)
      picked[v] = hn::GetLane(hn::MaxOfLanes(d, hn::LoadU(d, values + v * lanes)));
    std::nth_element(picked.begin(), picked.begin() + static_cast<std::ptrdiff_t>(k - 1), picked.end(),
                     std::greater<float>());
    bound = picked[k - 1];
  }
  // With no finite bound (short rows, or fewer than k vectors holding a candidate) every value is packed.
  picked.resize(size + lanes);
  const auto at_least = hn::Set(d, bound);
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + lanes <= size; i += lanes) {
    const auto v = hn::LoadU(d, values + i);
    const auto kept = hn::Ge(v, at_least);
    if (hn::AllFalse(d, kept)) continue;
    hn::StoreU(hn::Compress(v, kept), d, picked.data() + count);
    count += hn::CountTrue(d, kept);
  }
  for (; i < size; ++i) {
    if (values[i] >= bound) picked[count++] = values[i];
  }
  MINIGEN_ASSERT(count >= k, "kth_largest packed ", count, " values for k = ", k);  // the k maxima are packed
  std::nth_element(picked.begin(), picked.begin() + static_cast<std::ptrdiff_t>(k - 1),
                   picked.begin() + static_cast<std::ptrdiff_t>(count), std::greater<float>());
  return picked[k - 1];
}

// The largest value first (no NaN, so every comparison is exact), then the first index holding it: ±0 compare
// equal, so a row whose maximum is zero gets its first zero of either sign, as std::max_element gives.
int first_max_index_simd(const float* values, std::size_t size) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  float largest = values[0];
  std::size_t i = 0;
  if (size >= lanes) {
    auto running = hn::LoadU(d, values);
    for (i = lanes; i + lanes <= size; i += lanes) running = hn::Max(running, hn::LoadU(d, values + i));
    largest = hn::GetLane(hn::MaxOfLanes(d, running));
  }
  for (; i < size; ++i) largest = values[i] > largest ? values[i] : largest;
  const auto target = hn::Set(d, largest);
  for (i = 0; i + lanes <= size; i += lanes) {
    const intptr_t lane = hn::FindFirstTrue(d, hn::Eq(hn::LoadU(d, values + i), target));
    if (lane >= 0) return static_cast<int>(i + static_cast<std::size_t>(lane));
  }
  for (; i < size; ++i) {
    if (values[i] == largest) return static_cast<int>(i);
  }
  return 0;  // not reached: the largest value is in the row
}

// "Not −inf" is written as Not(Eq): x86's vector "not equal" is false for NaN, the scalar != is true.
int count_candidates_simd(const float* values, std::size_t size) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto removed = hn::Set(d, kMinusInfinitySimd);
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + lanes <= size; i += lanes) count += hn::CountTrue(d, hn::Not(hn::Eq(hn::LoadU(d, values + i), removed)));
  for (; i < size; ++i) count += values[i] == kMinusInfinitySimd ? 0 : 1;
  return static_cast<int>(count);
}

// Writes the values that are not −inf to out, in order, and returns how many; out has room for size + one vector.
// After top-k almost every vector holds none, so it is skipped on one test. The kept lanes are packed in a register
// and the whole vector stored: vcompressps straight to memory is microcoded and slow on AMD's cores.
std::size_t gather_candidates_simd(const float* values, std::size_t size, float* out) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto removed = hn::Set(d, kMinusInfinitySimd);
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + lanes <= size; i += lanes) {
    const auto v = hn::LoadU(d, values + i);
    const auto kept = hn::Not(hn::Eq(v, removed));
    if (hn::AllFalse(d, kept)) continue;
    hn::StoreU(hn::Compress(v, kept), d, out + count);
    count += hn::CountTrue(d, kept);
  }
  for (; i < size; ++i) {
    if (values[i] != kMinusInfinitySimd) out[count++] = values[i];
  }
  return count;
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(any_nan_simd);
HWY_EXPORT(divide_all_simd);
HWY_EXPORT(remove_below_simd);
HWY_EXPORT(kth_largest_simd);
HWY_EXPORT(first_max_index_simd);
HWY_EXPORT(count_candidates_simd);
HWY_EXPORT(gather_candidates_simd);

bool any_nan(std::span<const float> values) { return HWY_DYNAMIC_DISPATCH(any_nan_simd)(values.data(), values.size()); }

void divide_all(std::span<float> values, float divisor) {
  HWY_DYNAMIC_DISPATCH(divide_all_simd)(values.data(), values.size(), divisor);
}

void remove_below(std::span<float> values, float bound) {
  HWY_DYNAMIC_DISPATCH(remove_below_simd)(values.data(), values.size(), bound);
}

float kth_largest(std::span<const float> values, std::size_t k) {
  return HWY_DYNAMIC_DISPATCH(kth_largest_simd)(values.data(), values.size(), k);
}

int first_max_index(std::span<const float> values) {
  return HWY_DYNAMIC_DISPATCH(first_max_index_simd)(values.data(), values.size());
}

int count_candidates(std::span<const float> values) {
  return HWY_DYNAMIC_DISPATCH(count_candidates_simd)(values.data(), values.size());
}

void gather_candidates(std::span<const float> values, std::vector<float>& out) {
  out.resize(values.size() + hwy::kMaxVectorSize / sizeof(float));
  out.resize(HWY_DYNAMIC_DISPATCH(gather_candidates_simd)(values.data(), values.size(), out.data()));
}

namespace vocab_scan_reference {

float kth_largest(std::span<const float> values, std::size_t k) {
  std::vector<float> copy(values.begin(), values.end());
  std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(k - 1), copy.end(), std::greater<float>());
  return copy[k - 1];
}

int first_max_index(std::span<const float> values) {
  return static_cast<int>(std::max_element(values.begin(), values.end()) - values.begin());
}

}  // namespace vocab_scan_reference

}  // namespace minigen
#endif  // HWY_ONCE
