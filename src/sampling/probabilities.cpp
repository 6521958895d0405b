#include "sampling/probabilities.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/format.h"
#include "sampling/softmax_scan.h"

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
  // Subtracting the max keeps every exp in (0, 1], so nothing overflows; a removed token (−inf) gets exactly 0.
  const double sum = shifted_exp(logits.data(), max_logit, probabilities.data(), logits.size());
  divide_as_double(probabilities.data(), sum, probabilities.data(), probabilities.size());
}

}  // namespace minigen
