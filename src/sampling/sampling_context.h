#pragma once
// What a sampler needs to know about the row it is sampling for, besides its logits.
#include <cstdint>
#include <span>

namespace minigen {

struct SamplingContext {
  // Every id of this row so far: the prompt followed by the tokens generated so far (MiniMind's input_ids[i]).
  // The repetition penalty reads it; the other stages ignore it.
  std::span<const int> history = {};
  // Index of the row within its own request (0 … n−1 for n returned sequences), not its slot in the batch, so that
  // the random draw does not depend on which other requests share the batch.
  uint64_t row = 0;
  // Index of the token being generated: 0 for the first new token after the prompt.
  uint64_t step = 0;
  // The ids this row's grammar allows at this step, one bit each (bit id % 64 of word id / 64); empty: no grammar.
  // The first stage of the chain masks every other id (sampling/allowed_tokens_sampler.h).
  std::span<const uint64_t> allowed_tokens = {};
};

}  // namespace minigen
