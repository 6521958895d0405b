#include "sampling/min_p_sampler.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/format.h"
#include "sampling/probabilities.h"
#include "sampling/sampling_params.h"

namespace minigen {

MinPSampler::MinPSampler(float min_p) : min_p_(min_p) { check_min_p(min_p); }

void MinPSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  if (min_p_ == 0.0f) return;
  thread_local std::vector<float> probabilities;  // reused: see softmax_probabilities in probabilities.h
  softmax_probabilities(logits, probabilities);
  const float threshold = min_p_ * *std::max_element(probabilities.begin(), probabilities.end());
  for (size_t id = 0; id < logits.size(); ++id) {
    if (probabilities[id] < threshold) logits[id] = -std::numeric_limits<float>::infinity();
  }
}

std::string MinPSampler::name() const { return "min-p(" + shortest_decimal(min_p_) + ")"; }

}  // namespace minigen
