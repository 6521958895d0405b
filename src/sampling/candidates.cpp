#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>

#include "sampling/probabilities.h"

namespace minigen {

DrawDistribution describe_draw(std::span<const float> filtered_logits, int chosen, int count,
                               std::span<const int> tokens) {
  thread_local std::vector<float> probabilities;  // one buffer per pool thread; see probabilities.h
  softmax_probabilities(filtered_logits, probabilities);
  DrawDistribution out;
  out.chosen_probability = probabilities[chosen];
  std::vector<int> kept;
  for (int id = 0; id < static_cast<int>(filtered_logits.size()); ++id) {
    if (std::isfinite(filtered_logits[id])) kept.push_back(id);
  }
  const int shown = std::min(count, static_cast<int>(kept.size()));
  std::partial_sort(kept.begin(), kept.begin() + shown, kept.end(), [&](int a, int b) {
    return probabilities[a] != probabilities[b] ? probabilities[a] > probabilities[b] : a < b;
  });
  for (int i = 0; i < shown; ++i) out.top.push_back({kept[i], probabilities[kept[i]]});
  for (int token : tokens) out.of_tokens.push_back(probabilities.at(static_cast<std::size_t>(token)));
  return out;
}

}  // namespace minigen
