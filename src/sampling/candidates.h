#pragma once
// What a draw looked like, for reporting (OpenAI's logprobs): the chosen token's probability and the most likely
// tokens of the distribution it was drawn from — the softmax of the row after the sampler chain filtered it, so
// removed tokens have probability 0 and the kept ones sum to 1.
#include <span>
#include <vector>

namespace minigen {

struct Candidate {
  int token = 0;
  float probability = 0;
};

struct DrawDistribution {
  float chosen_probability = 0;
  std::vector<Candidate> top;    // the `count` most likely kept tokens, most likely first (ties: lower id first)
  std::vector<float> of_tokens;  // the probability of each id describe_draw's `tokens` named, in that order
};

// `filtered_logits` is a row after SamplerChain filtered it (−inf for removed tokens); `chosen` the token drawn.
// Uses the samplers' own softmax (softmax_probabilities), so the probability reported is the one the draw used.
// `tokens`: more ids whose probability is wanted (the model's most likely raw tokens, which a filter may have
// removed: 0), read from the same softmax instead of a second one over the vocabulary.
DrawDistribution describe_draw(std::span<const float> filtered_logits, int chosen, int count,
                               std::span<const int> tokens = {});

}  // namespace minigen
