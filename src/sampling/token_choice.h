#pragma once
// The last step of the chain: turn the filtered logits into one token id.
#include <span>

namespace minigen {

// Greedy: the first index of the largest logit, as torch.argmax returns for ties. Throws minigen::Error if empty.
int argmax(std::span<const float> logits);

// One multinomial draw from softmax(logits), given `uniform` in [0, 1).
// Walks ids in increasing order accumulating probability (in double, over the float probabilities of
// probabilities.h) and returns the first id whose cumulative sum exceeds uniform · total, where total is the sum of
// all probabilities (1 up to rounding). If rounding leaves no such id, returns the last id with nonzero probability.
// Removed tokens (−inf) have probability 0 and are never returned. Throws minigen::Error if uniform is outside
// [0, 1) or every logit is −inf.
int draw_from_softmax(std::span<const float> logits, double uniform);

}  // namespace minigen
