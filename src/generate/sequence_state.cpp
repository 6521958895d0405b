#include "generate/sequence_state.h"

#include <utility>

namespace minigen {

SequenceState::SequenceState(std::vector<int> prompt, const SamplingParams& sampling, uint64_t rng_row,
                             std::shared_ptr<const CompiledGrammar> grammar, SequenceRules rules)
    : tokens_(std::move(prompt)),
      prompt_tokens_(static_cast<int>(tokens_.size())),
      sampler_(sampling),
      rng_row_(rng_row),
      grammar_(grammar ? std::make_unique<GrammarMatcher>(std::move(grammar)) : nullptr),
      rules_(rules) {}

TokenChoice SequenceState::choose(std::span<float> logits, int top_candidates) {
  TokenChoice choice;
  SamplingContext context{tokens_, rng_row_, static_cast<uint64_t>(generated_)};
  if (grammar_) {  // the grammar's mask comes first in the chain; accept() moves the matcher on
    const TokenMask& allowed = grammar_->allowed_tokens();
    context.allowed_tokens = allowed.bits;
    choice.grammar_allowed = allowed.allowed_count;
  }
  const SampledToken sampled = sampler_.sample(logits, context);
  choice.token = sampled.token;
  choice.kept_candidates = sampled.kept_count;
  if (top_candidates > 0) {
    DrawDistribution drawn = describe_draw(logits, sampled.token, top_candidates);
    choice.probability = drawn.chosen_probability;
    choice.top = std::move(drawn.top);
  }
  return choice;
}

void SequenceState::accept(int token) {
  if (grammar_) grammar_->accept(token);
  tokens_.push_back(token);
  ++generated_;
  if (!rules_.ignore_eos && token == rules_.eos_token_id) {
    finish_reason_ = "stop";
  } else if (generated_ >= rules_.max_new_tokens) {
    finish_reason_ = "length";
  }
}

}  // namespace minigen
