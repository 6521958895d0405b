#pragma once
// softmax for the samplers: the probabilities that top-p, min-p and the final draw look at.
//
// Precision, on purpose: each exp is taken in float on (logit − max logit), as torch does in float32, with a
// vectorised exp as torch's (softmax_scan.h: within an ulp); the sum of the exps is accumulated in double so that
// it hardly depends on the vocabulary's order or size, and each probability is exp / sum rounded once to float.
// torch's CPU softmax sums in float, so individual probabilities may differ from MiniMind's by an ulp or two; only a
// cumulative sum that lands exactly on top_p can be decided differently.
#include <span>
#include <vector>

namespace minigen {

// softmax(logits). −inf logits get probability 0. Throws minigen::Error if no logit is finite (nothing to sample)
// or the largest is +inf or NaN.
std::vector<float> softmax_probabilities(std::span<const float> logits);

// The same, written into `probabilities` (resized to logits.size(), its capacity reused). The per-token callers keep
// one buffer per thread: a fresh 151,665-float vector every token costs more in page faults and zeroing than the
// softmax itself.
void softmax_probabilities(std::span<const float> logits, std::vector<float>& probabilities);

}  // namespace minigen
