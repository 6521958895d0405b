#pragma once
// Allowed tokens: every id the row's grammar does not allow becomes −inf, before any other stage, so that
// temperature, top-k, top-p and min-p rank only tokens that keep the output in the language (top-k after the mask
// keeps k allowed tokens; before it, it could keep none). The mask belongs to the row and changes every step, so
// it arrives in the SamplingContext; a row without a grammar has an empty mask and this stage does nothing.
#include <span>
#include <string>

#include "sampling/sampling_context.h"

namespace minigen {

class AllowedTokensSampler {
 public:
  // Throws minigen::Error when the mask is shorter than the logits need or allows none of them.
  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const { return "allowed-tokens"; }
};

}  // namespace minigen
