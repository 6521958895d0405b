#include "sampling/openai_penalty_sampler.h"

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/format.h"
#include "sampling/sampling_params.h"

namespace minigen {

OpenAiPenaltySampler::OpenAiPenaltySampler(float frequency_penalty, float presence_penalty)
    : frequency_penalty_(frequency_penalty), presence_penalty_(presence_penalty) {
  check_openai_penalty(SamplingParam::kFrequencyPenalty, frequency_penalty);
  check_openai_penalty(SamplingParam::kPresencePenalty, presence_penalty);
}

void OpenAiPenaltySampler::apply(std::span<float> logits, const SamplingContext& context) const {
  if (context.step > context.history.size()) {
    throw Error("penalties: step " + std::to_string(context.step) + " exceeds the row's " +
                std::to_string(context.history.size()) + " tokens");
  }
  const std::span<const int> generated = context.history.last(context.step);
  // Counts first, then one subtraction per distinct token, so the result does not depend on the order of repeats.
  std::vector<uint32_t> count(logits.size(), 0);
  for (const int id : generated) {
    if (id < 0 || static_cast<std::size_t>(id) >= logits.size()) {
      throw Error("penalties: generated token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                  std::to_string(logits.size()) + ")");
    }
    ++count[id];
  }
  for (const int id : generated) {
    if (count[id] == 0) continue;  // already penalised
    logits[id] -= static_cast<float>(count[id]) * frequency_penalty_ + presence_penalty_;
    count[id] = 0;
  }
}

std::string OpenAiPenaltySampler::name() const {
  return "openai-penalties(frequency=" + shortest_decimal(frequency_penalty_) +
         ", presence=" + shortest_decimal(presence_penalty_) + ")";
}

}  // namespace minigen
