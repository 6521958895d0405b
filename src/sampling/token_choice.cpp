#include "sampling/token_choice.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/assert.h"
#include "core/error.h"
#include "sampling/probabilities.h"
#include "sampling/softmax_scan.h"
#include "sampling/vocab_scan.h"

namespace minigen {

int argmax(std::span<const float> logits) {
  if (logits.empty()) throw Error("argmax needs at least one logit, got an empty row");
  // The first of equal maxima, which is torch.argmax's choice too. A row with a NaN keeps std::max_element's
  // answer, whatever that is: the vector form is exact only where every comparison is.
  if (any_nan(logits)) return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  return first_max_index(logits);
}

int draw_from_softmax(std::span<const float> logits, double uniform) {
  if (!(uniform >= 0.0 && uniform < 1.0)) {
    throw Error("draw_from_softmax needs a uniform number in [0, 1), got " + std::to_string(uniform));
  }
  // Removed tokens (−inf) have probability exactly 0: they add nothing to either sum below and are never returned.
  // So the draw runs over the survivors alone, kept in increasing id order, which gives the same sums and the same
  // token as walking the whole row, while after top-k 50 it touches 50 entries instead of 151,665. When every token
  // survives (no filter, as in an RL rollout) the row itself is the survivors. The buffers are reused per thread,
  // for the reason given in probabilities.h.
  thread_local std::vector<int> survivor_ids;
  thread_local std::vector<float> survivor_logits;
  thread_local std::vector<float> probabilities;
  const bool all_survive = count_candidates(logits) == static_cast<int>(logits.size());
  if (!all_survive) {
    survivor_ids.clear();
    survivor_logits.clear();
    for (size_t id = 0; id < logits.size(); ++id) {
      if (logits[id] == -std::numeric_limits<float>::infinity()) continue;
      survivor_ids.push_back(static_cast<int>(id));
      survivor_logits.push_back(logits[id]);
    }
  }
  // With no survivor the row is empty or all −inf, and the softmax of the whole row throws the error that says so.
  softmax_probabilities(all_survive || survivor_logits.empty() ? logits : std::span<const float>(survivor_logits),
                        probabilities);
  const auto id_of = [&](size_t index) { return all_survive ? static_cast<int>(index) : survivor_ids[index]; };

  const double target = uniform * sum_as_double(probabilities.data(), probabilities.size());

  double cumulative = 0.0;
  int last_possible_id = -1;
  for (size_t index = 0; index < probabilities.size(); ++index) {
    if (probabilities[index] == 0.0f) continue;  // an exp that underflowed: as impossible as a removed token
    cumulative += probabilities[index];
    last_possible_id = id_of(index);
    if (cumulative > target) return last_possible_id;
  }
  // Reached only when uniform · total rounds up to the total itself (uniform a hair below 1). The most likely
  // survivor has probability e⁰ / total > 0, so some id was possible.
  MINIGEN_ASSERT(last_possible_id >= 0, "draw: ", probabilities.size(), " candidates, none with a probability");
  return last_possible_id;
}

}  // namespace minigen
