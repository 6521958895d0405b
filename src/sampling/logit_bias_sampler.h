#pragma once
// OpenAI's logit_bias: a fixed number added to chosen tokens' logits before the filters. −100 removes the token
// (its logit becomes −inf, as the filters remove tokens), so "−100 bans" holds at any temperature; OpenAI says
// −100 "should result in a ban". +100 makes the token all but certain. Biases are added after the temperature,
// as the penalties are, so a bias means the same whatever T is.
#include <span>
#include <string>
#include <vector>

#include "sampling/sampling_context.h"
#include "sampling/sampling_params.h"

namespace minigen {

class LogitBiasSampler {
 public:
  // Throws InvalidSamplingParam for a bias outside [-100, 100], a negative id or an id named twice.
  explicit LogitBiasSampler(std::vector<LogitBias> biases);

  // Throws minigen::Error if an id is outside [0, logits.size()).
  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const;  // "logit-bias(3 tokens)"

 private:
  std::vector<LogitBias> biases_;
};

}  // namespace minigen
