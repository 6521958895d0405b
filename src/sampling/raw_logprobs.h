#pragma once
// The log-probabilities an RL trainer divides by: log_softmax of the model's raw logits (temperature 1, before any
// penalty or filter) — what MiniMind's compute_per_token_logps recomputes for the rollout's tokens, so the rollout's
// numbers and the trainer's are the same quantity. Not the distribution the token was drawn from (candidates.h).
#include <span>
#include <vector>

namespace minigen {

struct TokenLogprob {
  int token = 0;
  float logprob = 0;
  // The token's probability in the distribution it could have been drawn from (after the grammar, temperature,
  // penalties and filters, renormalised over the kept set; 0 when a filter removed it), filled in by
  // SequenceState::choose when that distribution is reported too, so that a learner sees what top-k / top-p did to
  // each of the model's most likely tokens; −1 when it was not asked for.
  float kept_probability = -1;
};

struct RawLogprobs {
  float chosen = 0;               // log_softmax(raw)[chosen]
  std::vector<TokenLogprob> top;  // the `count` most likely tokens of the raw row, most likely first (ties: lower id)
};

// log_softmax(x)_i = x_i − max − log Σ_j exp(x_j − max), the sum in double. Throws minigen::Error for an empty row or
// a chosen id outside it.
RawLogprobs raw_logprobs(std::span<const float> raw_logits, int chosen, int count);

}  // namespace minigen
