#include "sampling/probabilities.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "sampling/shortest_decimal.h"

namespace minigen {

std::vector<float> softmax_probabilities(std::span<const float> logits) {
  if (logits.empty()) throw Error("softmax needs at least one logit, got an empty row");
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  if (!std::isfinite(max_logit)) {
    throw Error("softmax needs a finite largest logit (at least one token not removed), got " +
                shortest_decimal(max_logit));
  }
  std::vector<float> probabilities(logits.size());
  double sum = 0.0;
  for (size_t id = 0; id < logits.size(); ++id) {
    // Subtracting the max keeps every exp in (0, 1], so nothing overflows; exp(−inf) is exactly 0.
    probabilities[id] = std::exp(logits[id] - max_logit);
    sum += probabilities[id];
  }
  for (float& probability : probabilities) probability = static_cast<float>(probability / sum);
  return probabilities;
}

}  // namespace minigen
