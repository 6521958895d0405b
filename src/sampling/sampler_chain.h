#pragma once
// The sampler chain: every stage that turns one row's logits into one token, in an order written out in one place
// (the constructor). The default and only order is MiniMind's, after the row's grammar mask when it has one, with
// OpenAI's penalties and logit bias beside MiniMind's repetition penalty:
//   allowed tokens → temperature → repetition penalty → frequency/presence penalties → logit bias → top-k → top-p
//   → min-p → (random draw | argmax)
// The allowed-tokens stage (structured output, grammar/) is always first: every later stage then ranks only
// tokens the grammar allows (a bias cannot bring back a masked token: −inf + b = −inf). It reads its mask from the
// row's SamplingContext and does nothing without one.
// Compare llama.cpp (temperature last, so top-p sees T = 1 probabilities) and Hugging Face (penalty before
// temperature); with temperature first, a low T also narrows the top-p nucleus.
//
// Stages that are switched off (top-k 0, top-p 1, min-p 0, penalty 1, OpenAI penalties 0, no logit bias, greedy with
// T ≤ 0) are not in the chain.
// The filters run for greedy decoding too, as in MiniMind; they never change the argmax, but they keep the
// reported candidate count meaningful.
//
// A chain serves one request: it is built from that request's SamplingParams, whose seed drives its draws.
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "sampling/allowed_tokens_sampler.h"
#include "sampling/logit_bias_sampler.h"
#include "sampling/min_p_sampler.h"
#include "sampling/openai_penalty_sampler.h"
#include "sampling/repetition_penalty_sampler.h"
#include "sampling/sampling_context.h"
#include "sampling/sampling_params.h"
#include "sampling/temperature_sampler.h"
#include "sampling/top_k_sampler.h"
#include "sampling/top_p_sampler.h"

namespace minigen {

struct SampledToken {
  int token = 0;
  // Tokens still possible after every filter (finite logits): what the draw chose among.
  int kept_count = 0;
};

class SamplerChain {
 public:
  // Validates params (minigen::Error naming the flag on bad values).
  explicit SamplerChain(const SamplingParams& params);

  // Runs the filter stages in place: on return, removed tokens are −inf.
  void filter(std::span<float> logits, const SamplingContext& context) const;

  // 1 for every id that survives filter() on a copy of `logits`, 0 for the rest. For tests and the reference-oracle
  // comparison: exactly which ids top-k, top-p and min-p left.
  std::vector<uint8_t> kept_mask(std::span<const float> logits, const SamplingContext& context) const;

  // Filters `logits` in place, then takes the argmax (greedy) or draws with uniform_for(seed, context.row,
  // context.step). Throws minigen::Error on an empty row, a NaN logit, or a history id outside the vocabulary.
  SampledToken sample(std::span<float> logits, const SamplingContext& context) const;

  // The stages in order, with their settings, for reports:
  // {"temperature(0.85)", "top-k(50)", "top-p(0.85, minimind)", "draw(seed=0)"}. The allowed-tokens stage is
  // named only when the row has a grammar, which the chain does not know: reports name it themselves.
  std::vector<std::string> stage_names() const;

  const SamplingParams& params() const { return params_; }

 private:
  // Every stage has the same apply(logits, context) and name(), so the chain is a plain list visited in order.
  using Stage = std::variant<AllowedTokensSampler, TemperatureSampler, RepetitionPenaltySampler, OpenAiPenaltySampler,
                             LogitBiasSampler, TopKSampler, TopPSampler, MinPSampler>;

  SamplingParams params_;
  std::vector<Stage> stages_;
};

}  // namespace minigen
