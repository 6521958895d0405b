#include "sampling/repetition_penalty_sampler.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/format.h"
#include "sampling/sampling_params.h"

namespace minigen {

RepetitionPenaltySampler::RepetitionPenaltySampler(float penalty) : penalty_(penalty) {
  check_repetition_penalty(penalty);
}

void RepetitionPenaltySampler::apply(std::span<float> logits, const SamplingContext& context) const {
  if (penalty_ == 1.0f) return;
  const size_t vocabulary_size = logits.size();
  // A flag per vocabulary id makes "distinct ids" O(history + vocabulary) and leaves the history untouched.
  std::vector<uint8_t> already_penalised(vocabulary_size, 0);
  for (const int id : context.history) {
    if (id < 0 || static_cast<size_t>(id) >= vocabulary_size) {
      throw Error("repetition penalty: token id " + std::to_string(id) +
                  " in the history is outside the vocabulary [0, " + std::to_string(vocabulary_size) + ")");
    }
    if (already_penalised[id]) continue;
    already_penalised[id] = 1;
    float& logit = logits[id];
    logit = logit > 0.0f ? logit / penalty_ : logit * penalty_;
  }
}

std::string RepetitionPenaltySampler::name() const { return "repetition-penalty(" + shortest_decimal(penalty_) + ")"; }

}  // namespace minigen
