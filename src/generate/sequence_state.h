#pragma once
// One sequence's generation state — what MiniMind's loop keeps for one row of input_ids — used by generate() and by
// the serving scheduler alike, so that "mask → draw → accept" and the rules that end a row are written once:
//   tokens      the prompt, then every generated token (then eos padding, in generate()'s batch)
//   sampler     the row's sampler chain (sampling/sampler_chain.h), keyed by (seed, rng_row, step)
//   grammar     the row's place in its structured-output grammar, if it has one
//   end rules   eos ends the row with "stop" (unless ignore_eos); max_new_tokens ends it with "length"
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/grammar_matcher.h"
#include "sampling/candidates.h"
#include "sampling/raw_logprobs.h"
#include "sampling/sampler_chain.h"
#include "sampling/sampling_params.h"

namespace minigen {

struct SequenceRules {
  int max_new_tokens = 16;
  bool ignore_eos = false;  // never "stop": forces exactly max_new_tokens (for experiments)
  int eos_token_id = 2;
  // More ids that end the row with "stop" (SGLang's stop_token_ids); like eos, not checked with ignore_eos.
  std::vector<int> stop_token_ids = {};
};

// What one step chose for a sequence, before it is accepted.
struct TokenChoice {
  int token = 0;
  int kept_candidates = 0;     // tokens still possible after every filter
  int grammar_allowed = -1;    // ids the grammar's mask allowed; −1 without a grammar
  float probability = 0;       // of the chosen token, when top candidates were asked for
  std::vector<Candidate> top;  // the most likely kept candidates, when asked for
  // log_softmax of the raw logits at the chosen token and the most likely raw tokens, when asked for
  // (raw_logprobs.h: the number an RL trainer divides by).
  bool has_raw_logprob = false;
  RawLogprobs raw;
};

class SequenceState {
 public:
  // rng_row: the sequence's index within its own request, so its draws never depend on its neighbours in a batch.
  SequenceState(std::vector<int> prompt, const SamplingParams& sampling, uint64_t rng_row,
                std::shared_ptr<const CompiledGrammar> grammar, SequenceRules rules);

  // This step's token from the row's last logits: the grammar's mask, then the chain, filtering `logits` in place,
  // then the draw (or argmax). Changes nothing of the sequence but its matcher's mask cache; throws what the chain
  // throws (minigen::Error, InvalidSamplingParam) and MaskWorkLimit for a mask over its work budget.
  // raw_top ≥ 0: also the raw log-probability of the chosen token and the raw_top most likely raw tokens — with
  // top_candidates > 0, each of those with its probability in the kept set too (TokenLogprob::kept_probability).
  TokenChoice choose(std::span<float> logits, int top_candidates = 0, int raw_top = -1);
  // Appends the chosen token, advances the grammar by it and applies the end rules.
  void accept(int token);
  // MiniMind keeps feeding a finished row and pads it with eos; padding is not a generated token.
  void pad_with_eos() { tokens_.push_back(rules_.eos_token_id); }

  const std::vector<int>& tokens() const { return tokens_; }
  int prompt_tokens() const { return prompt_tokens_; }
  int generated() const { return generated_; }
  bool finished() const { return !finish_reason_.empty(); }
  const std::string& finish_reason() const { return finish_reason_; }  // "stop", "length", or "" while running
  GrammarMatcher* grammar() { return grammar_.get(); }                 // nullptr without one
  const SequenceRules& rules() const { return rules_; }

 private:
  std::vector<int> tokens_;
  int prompt_tokens_ = 0;
  int generated_ = 0;
  SamplerChain sampler_;
  uint64_t rng_row_ = 0;
  std::unique_ptr<GrammarMatcher> grammar_;
  SequenceRules rules_;
  std::string finish_reason_;
};

}  // namespace minigen
