#include "sampling/top_k_sampler.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "core/error.h"

namespace minigen {

TopKSampler::TopKSampler(int k) : k_(k) {
  if (k < 0) throw Error("top-k must be >= 0 (0 turns it off), got " + std::to_string(k));
}

void TopKSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  if (k_ == 0 || static_cast<size_t>(k_) >= logits.size()) return;
  // The k-th largest value, counting duplicates, like torch.topk(logits, k).values[-1].
  std::vector<float> values(logits.begin(), logits.end());
  const auto kth = values.begin() + (k_ - 1);
  std::nth_element(values.begin(), kth, values.end(), std::greater<float>());
  const float kth_largest = *kth;
  for (float& logit : logits) {
    if (logit < kth_largest) logit = -std::numeric_limits<float>::infinity();
  }
}

std::string TopKSampler::name() const { return "top-k(" + std::to_string(k_) + ")"; }

}  // namespace minigen
