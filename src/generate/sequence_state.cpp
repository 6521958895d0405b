#include "generate/sequence_state.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace minigen {

SequenceState::SequenceState(std::vector<int> prompt, const SamplingParams& sampling, uint64_t rng_row,
                             std::shared_ptr<const CompiledGrammar> grammar, SequenceRules rules)
    : tokens_(std::move(prompt)),
      prompt_tokens_(static_cast<int>(tokens_.size())),
      sampler_(sampling),
      rng_row_(rng_row),
      grammar_(grammar ? std::make_unique<GrammarMatcher>(std::move(grammar)) : nullptr),
      rules_(rules) {}

TokenChoice SequenceState::choose(std::span<float> logits, int top_candidates, int raw_top) {
  TokenChoice choice;
  // The chain filters `logits` in place, so the raw row is kept first when its log-probabilities are wanted.
  thread_local std::vector<float> raw_row;
  if (raw_top >= 0) raw_row.assign(logits.begin(), logits.end());
  SamplingContext context{tokens_, rng_row_, static_cast<uint64_t>(generated_)};
  if (grammar_) {  // the grammar's mask comes first in the chain; accept() moves the matcher on
    const TokenMask& allowed = grammar_->allowed_tokens();
    context.allowed_tokens = allowed.bits;
    choice.grammar_allowed = allowed.allowed_count;
  }
  const SampledToken sampled = sampler_.sample(logits, context);
  choice.token = sampled.token;
  choice.kept_candidates = sampled.kept_count;
  if (raw_top >= 0) {
    choice.has_raw_logprob = true;
    choice.raw = raw_logprobs(raw_row, sampled.token, raw_top);
  }
  if (top_candidates > 0) {
    std::vector<int> raw_top_tokens;
    for (const TokenLogprob& candidate : choice.raw.top) raw_top_tokens.push_back(candidate.token);
    DrawDistribution drawn = describe_draw(logits, sampled.token, top_candidates, raw_top_tokens);
    choice.probability = drawn.chosen_probability;
    choice.top = std::move(drawn.top);
    for (std::size_t i = 0; i < choice.raw.top.size(); ++i) choice.raw.top[i].kept_probability = drawn.of_tokens[i];
  }
  return choice;
}

void SequenceState::accept(int token) {
  if (grammar_) grammar_->accept(token);
  tokens_.push_back(token);
  ++generated_;
  const bool stop_token =
      std::find(rules_.stop_token_ids.begin(), rules_.stop_token_ids.end(), token) != rules_.stop_token_ids.end();
  if (!rules_.ignore_eos && (token == rules_.eos_token_id || stop_token)) {
    finish_reason_ = "stop";
  } else if (generated_ >= rules_.max_new_tokens) {
    finish_reason_ = "length";
  }
}

}  // namespace minigen
