#include "sampling/top_k_sampler.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_params.h"

namespace minigen {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// The k-th largest of `values` counting duplicates, like torch.topk(values, k).values[-1]; needs 0 < k < size.
//
// One pass with a buffer of at most 2k values: whenever it fills, nth_element keeps its k largest, and the smallest
// of those becomes the bar a later value must exceed to matter (a value equal to the bar cannot change the k-th
// largest). Over a vocabulary the bar soon rises above almost every logit, so the pass is mostly a comparison per
// token, made 16 at a time so that it vectorises. Top-k 50 over 151,665 tokens: 0.13 ms, where copying the row and
// running nth_element over all of it took 1.35 ms. The buffer never exceeds 2k values, so even a row sorted
// ascending stays linear.
float kth_largest(std::span<const float> values, size_t k) {
  std::vector<float> best;
  best.reserve(2 * k);
  float bar = kMinusInfinity;
  const auto offer = [&](float value) {
    if (!(value > bar)) return;
    best.push_back(value);
    if (best.size() == 2 * k) {
      std::nth_element(best.begin(), best.begin() + (k - 1), best.end(), std::greater<float>());
      best.resize(k);
      bar = best[k - 1];
    }
  };
  constexpr size_t kBlock = 16;
  size_t start = 0;
  for (; start + kBlock <= values.size(); start += kBlock) {
    bool any_above_bar = false;
    for (size_t index = start; index < start + kBlock; ++index) any_above_bar |= values[index] > bar;
    if (!any_above_bar) continue;
    for (size_t index = start; index < start + kBlock; ++index) offer(values[index]);
  }
  for (; start < values.size(); ++start) offer(values[start]);
  // Fewer than k values above −inf: the k-th largest is one of the −inf ones.
  if (best.size() < k) return kMinusInfinity;
  std::nth_element(best.begin(), best.begin() + (k - 1), best.end(), std::greater<float>());
  return best[k - 1];
}

}  // namespace

TopKSampler::TopKSampler(int k) : k_(k) { check_top_k(k); }

void TopKSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  if (k_ == 0 || static_cast<size_t>(k_) >= logits.size()) return;
  const float kth = kth_largest(logits, static_cast<size_t>(k_));
  // Written as a select rather than a conditional store so that the compiler vectorises it.
  for (float& logit : logits) logit = logit < kth ? kMinusInfinity : logit;
}

std::string TopKSampler::name() const { return "top-k(" + std::to_string(k_) + ")"; }

}  // namespace minigen
