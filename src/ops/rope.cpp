#include "ops/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/rope.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The same two products and one sum or difference per element as the scalar loop, so the bits are the same.
void rotate_halves(float* head, const float* cos_row, const float* sin_row, int half) {
  const hn::ScalableTag<float> d;
  const int lanes = static_cast<int>(hn::Lanes(d));
  int i = 0;
  for (; i + lanes <= half; i += lanes) {
    const auto first = hn::LoadU(d, head + i);
    const auto second = hn::LoadU(d, head + i + half);
    const auto c = hn::LoadU(d, cos_row + i);
    const auto s = hn::LoadU(d, sin_row + i);
    hn::StoreU(hn::Sub(hn::Mul(first, c), hn::Mul(second, s)), d, head + i);
    hn::StoreU(hn::Add(hn::Mul(second, c), hn::Mul(first, s)), d, head + i + half);
  }
  for (; i < half; ++i) {
    const float first = head[i];
    const float second = head[i + half];
    head[i] = first * cos_row[i] - second * sin_row[i];
    head[i + half] = second * cos_row[i] + first * sin_row[i];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace minigen
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen {

HWY_EXPORT(rotate_halves);

RopeTable::RopeTable(int head_dim, int max_positions, double theta, const std::optional<RopeYarn>& yarn)
    : head_dim_(head_dim), max_positions_(max_positions) {
  if (head_dim <= 0 || head_dim % 2 != 0) throw Error("RoPE needs a positive, even head_dim");
  if (max_positions <= 0) throw Error("RoPE needs a positive number of positions");
  const int half = head_dim / 2;
  frequency_.resize(half);
  const float theta_f = static_cast<float>(theta);
  for (int i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    frequency_[i] = 1.0f / std::pow(theta_f, exponent);
  }
  if (yarn) {
    attention_factor_ = static_cast<float>(yarn->attention_factor);
    const double original = yarn->original_max_position_embeddings;
    if (max_positions / original > 1.0) {
      // YaRN: frequencies between the two "beta" wavelengths are blended from f to f/factor by a linear ramp.
      auto dimension_for = [&](double beta) {
        return (head_dim * std::log(original / (beta * 2 * std::numbers::pi))) / (2 * std::log(theta));
      };
      const double low = std::max(std::floor(dimension_for(yarn->beta_fast)), 0.0);
      const double high = std::min(std::ceil(dimension_for(yarn->beta_slow)), static_cast<double>(half - 1));
      for (int i = 0; i < half; ++i) {
        const float ramp = std::clamp(static_cast<float>((i - low) / std::max(high - low, 0.001)), 0.0f, 1.0f);
        frequency_[i] = frequency_[i] * (1.0f - ramp + ramp / static_cast<float>(yarn->factor));
      }
    }
  }
  tabled_positions_ = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(max_positions), std::max<std::size_t>(1, kMaxTableFloats / half)));
  cos_.resize(static_cast<std::size_t>(tabled_positions_) * half);
  sin_.resize(cos_.size());
  for (int position = 0; position < tabled_positions_; ++position) {
    for (int i = 0; i < half; ++i) {
      const float angle = static_cast<float>(position) * frequency_[i];
      cos_[static_cast<std::size_t>(position) * half + i] = std::cos(angle) * attention_factor_;
      sin_[static_cast<std::size_t>(position) * half + i] = std::sin(angle) * attention_factor_;
    }
  }
}

void RopeTable::apply(float* head, int position) const {
  if (position < 0 || position >= max_positions_) {
    throw Error("position " + std::to_string(position) + " is beyond the model's context of " +
                std::to_string(max_positions_) + " tokens");
  }
  const int half = head_dim_ / 2;
  if (position < tabled_positions_) {
    const float* cos_row = cos_.data() + static_cast<std::size_t>(position) * half;
    const float* sin_row = sin_.data() + static_cast<std::size_t>(position) * half;
    HWY_DYNAMIC_DISPATCH(rotate_halves)(head, cos_row, sin_row, half);
    return;
  }
  // Beyond the table: the same expressions as the constructor's loop, for this one position.
  thread_local std::vector<float> row;
  row.resize(2 * static_cast<std::size_t>(half));
  for (int i = 0; i < half; ++i) {
    const float angle = static_cast<float>(position) * frequency_[i];
    row[i] = std::cos(angle) * attention_factor_;
    row[half + i] = std::sin(angle) * attention_factor_;
  }
  HWY_DYNAMIC_DISPATCH(rotate_halves)(head, row.data(), row.data() + half, half);
}

}  // namespace minigen
#endif  // HWY_ONCE
