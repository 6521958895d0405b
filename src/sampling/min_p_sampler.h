#pragma once
// min-p: keep tokens whose probability is at least min_p times the most likely token's probability.
//
// Not part of MiniMind; the chain puts it after top-p, so probabilities are softmax of the logits that survived
// temperature, penalty, top-k and top-p. The most likely token always survives. min_p == 0 turns it off.
#include <span>
#include <string>

#include "sampling/sampling_context.h"

namespace minigen {

class MinPSampler {
 public:
  // Throws minigen::Error unless min_p is in [0, 1].
  explicit MinPSampler(float min_p);

  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const;  // "min-p(0.05)"

 private:
  float min_p_;
};

}  // namespace minigen
