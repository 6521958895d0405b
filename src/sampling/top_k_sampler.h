#pragma once
// top-k, as MiniMind writes it: logits[logits < topk(logits, k)[-1]] = −inf.
//
// Every logit strictly below the k-th largest value (duplicates counted) is removed, so ties AT the k-th value all
// survive and more than k tokens can remain. k == 0 turns it off; k ≥ vocabulary size keeps everything.
#include <span>
#include <string>

#include "sampling/sampling_context.h"

namespace minigen {

class TopKSampler {
 public:
  // Throws minigen::Error if k < 0.
  explicit TopKSampler(int k);

  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const;  // "top-k(50)"

 private:
  int k_;
};

}  // namespace minigen
