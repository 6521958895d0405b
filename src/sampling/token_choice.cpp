#include "sampling/token_choice.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "sampling/probabilities.h"

namespace minigen {

int argmax(std::span<const float> logits) {
  if (logits.empty()) throw Error("argmax needs at least one logit, got an empty row");
  // std::max_element returns the first of equal maxima, which is torch.argmax's choice too.
  return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

int draw_from_softmax(std::span<const float> logits, double uniform) {
  if (!(uniform >= 0.0 && uniform < 1.0)) {
    throw Error("draw_from_softmax needs a uniform number in [0, 1), got " + std::to_string(uniform));
  }
  const std::vector<float> probabilities = softmax_probabilities(logits);
  double total = 0.0;
  for (const float probability : probabilities) total += probability;
  const double target = uniform * total;

  double cumulative = 0.0;
  int last_possible_id = -1;
  for (size_t id = 0; id < probabilities.size(); ++id) {
    if (probabilities[id] == 0.0f) continue;
    cumulative += probabilities[id];
    last_possible_id = static_cast<int>(id);
    if (cumulative > target) return last_possible_id;
  }
  // Reached only when uniform · total rounds up to the total itself (uniform a hair below 1).
  return last_possible_id;
}

}  // namespace minigen
