#pragma once
// top-p (nucleus) filtering with a choice of boundary rule (see top_p_rule.h).
//
// Probabilities are softmax of the CURRENT logits, i.e. after temperature, repetition penalty and top-k, as in
// MiniMind. Tokens are ordered by logit, largest first; equal logits are ordered by increasing id (a stable sort of
// the ids), so among tied tokens at the boundary the lower id is kept. torch.sort does not promise an order for ties.
//
// Cumulative sums, matching what each engine really computes in float32:
//   Minimind and HuggingFace use torch.cumsum, whose CPU kernel accumulates float input in double and rounds each
//   prefix to float; the comparison with p is then float against float (torch casts the Python scalar to float32).
//   HuggingFace's threshold 1 − p is computed by Python in double from the decimal the user typed, then rounded to
//   float: for p = 0.8 that is float(0.19999999999999996) = 0.2f, one float step above 1.0f − 0.8f.
//   LlamaCpp accumulates in float (`float cum_sum += p`) and compares with the float p.
//
// Worked example, probabilities [0.5, 0.3, 0.1, 0.1] as floats, p = 0.8 (0.8f = 0.800000011920928955078125):
//   Minimind:    prefixes 0.5f, 0.5f+0.3f = 0.8f exactly (13421773·2⁻²⁴), 0.90000004f, 1.0f. cum > 0.8f is
//                [no, no, yes, yes]; shifted right → remove only the last → keeps 3.
//   HuggingFace: ascending 0.1f, 0.1f, 0.3f, 0.5f; prefixes 0.1f, 0.2f (doubling is exact), 0.5f, 1.0f.
//                ≤ 0.2f removes the first two → keeps 2. (With 1.0f − 0.8f = 0.199999988 it would keep 3.)
//   LlamaCpp:    0.5f, then 0.5f + 0.3f = 0.8f ≥ 0.8f → stop there → keeps 2.
#include <span>
#include <string>

#include "sampling/sampling_context.h"
#include "sampling/top_p_rule.h"

namespace minigen {

// How many leading entries of `descending_probabilities` (largest first, the order described above) `rule` keeps.
// Never less than 1 for a non-empty list. Exposed so the boundary rules can be tested on exact probabilities.
int top_p_kept_count(std::span<const float> descending_probabilities, float top_p, TopPRule rule);

class TopPSampler {
 public:
  // Throws minigen::Error unless top_p is in (0, 1]. top_p == 1 keeps everything.
  TopPSampler(float top_p, TopPRule rule);

  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const;  // "top-p(0.85, minimind)"

 private:
  float top_p_;
  TopPRule rule_;
};

}  // namespace minigen
