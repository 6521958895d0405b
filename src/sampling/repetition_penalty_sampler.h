#pragma once
// Repetition penalty, MiniMind's sign-aware rule: for every DISTINCT id seen in the row (prompt + generated),
//   logit > 0 ? logit / r : logit * r
// so with r > 1 a seen token always becomes less likely, whatever the sign of its logit. An id seen five times is
// penalised once, as torch.unique does in MiniMind. r == 1 changes nothing.
#include <span>
#include <string>

#include "sampling/sampling_context.h"

namespace minigen {

class RepetitionPenaltySampler {
 public:
  // Throws minigen::Error unless penalty is finite and > 0.
  explicit RepetitionPenaltySampler(float penalty);

  // Reads context.history; throws minigen::Error if an id there is outside [0, logits.size()).
  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const;  // "repetition-penalty(1.1)"

 private:
  float penalty_;
};

}  // namespace minigen
