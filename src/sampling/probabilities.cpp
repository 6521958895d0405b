#include "sampling/probabilities.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/format.h"

namespace minigen {

std::vector<float> softmax_probabilities(std::span<const float> logits) {
  std::vector<float> probabilities;
  softmax_probabilities(logits, probabilities);
  return probabilities;
}

void softmax_probabilities(std::span<const float> logits, std::vector<float>& probabilities) {
  if (logits.empty()) throw Error("softmax needs at least one logit, got an empty row");
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  if (!std::isfinite(max_logit)) {
    throw Error("softmax needs a finite largest logit (at least one token not removed), got " +
                shortest_decimal(max_logit));
  }
  probabilities.resize(logits.size());  // every entry is written below, so stale values from a reuse never leak
  double sum = 0.0;
  for (size_t id = 0; id < logits.size(); ++id) {
    // exp(−inf) is exactly 0 and adding 0 leaves the sum unchanged, so removed tokens skip the exp: after top-k that
    // is nearly the whole vocabulary, and the exp is most of this function's cost.
    if (logits[id] == -std::numeric_limits<float>::infinity()) {
      probabilities[id] = 0.0f;
      continue;
    }
    // Subtracting the max keeps every exp in (0, 1], so nothing overflows.
    probabilities[id] = std::exp(logits[id] - max_logit);
    sum += probabilities[id];
  }
  for (float& probability : probabilities) probability = static_cast<float>(probability / sum);
}

}  // namespace minigen
