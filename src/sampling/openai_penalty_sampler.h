#pragma once
// OpenAI's frequency and presence penalties, as its API reference defines them: for every token j,
//   logit[j] −= count[j] · frequency_penalty + (count[j] > 0) · presence_penalty
// where count[j] is how often j occurs among the tokens GENERATED so far (not the prompt, unlike MiniMind's
// repetition penalty, which reads prompt + generated). Positive values discourage repeats, negative ones encourage
// them. The generated tokens are the last context.step ids of context.history.
#include <span>
#include <string>

#include "sampling/sampling_context.h"

namespace minigen {

class OpenAiPenaltySampler {
 public:
  // Throws InvalidSamplingParam unless both are in [-2, 2].
  OpenAiPenaltySampler(float frequency_penalty, float presence_penalty);

  // Throws minigen::Error if a generated id is outside [0, logits.size()) or step exceeds the history.
  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const;  // "openai-penalties(frequency=0.5, presence=0.2)"

 private:
  float frequency_penalty_;
  float presence_penalty_;
};

}  // namespace minigen
