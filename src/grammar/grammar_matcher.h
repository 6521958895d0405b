#pragma once
// One row's place in its grammar: the mutable half of constrained sampling (the CompiledGrammar is the shared,
// immutable half). Each row of a batch has its own matcher; the generate loop asks it for the allowed tokens
// before sampling and tells it the chosen token after.
//
// eos is allowed exactly where the document is complete. Once nothing can follow (an object's closing brace at
// the top), eos is the only allowed token; a top-level number may still grow, so there eos and digits both are.
// After eos, eos is the only allowed token (a row padded with eos stays valid).
#include <cstdint>
#include <memory>
#include <span>

#include "grammar/byte_matcher.h"
#include "grammar/compiled_grammar.h"

namespace minigen {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  // The ids allowed next (computed once per state, then shared through the grammar's cache).
  const TokenMask& allowed_tokens();
  // Whether allowed_tokens() would have to walk the vocabulary: the mask is neither known nor in the grammar's
  // cache (a state known to be over the budget needs no work: allowed_tokens() throws at once).
  bool mask_needs_work();
  // Works on the mask for about `step_allowance` matcher steps (MaskJob::advance); returns whether
  // allowed_tokens() is now immediate. Throws MaskWorkLimit as allowed_tokens() would.
  bool work_on_mask(int64_t step_allowance);
  // Drops a mask in progress (its row was preempted); the work starts over when the mask is asked for again.
  void drop_mask_work() { job_.reset(); }
  // Sets every disallowed logit to −inf; returns how many ids are still allowed.
  int mask(std::span<float> logits);
  // Advances by a chosen token. Throws minigen::Error if the grammar does not allow it here.
  void accept(int token);

  // Whether the document is complete: eos is allowed.
  bool is_complete() const;
  // Whether eos has been accepted.
  bool is_finished() const { return finished_; }
  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  std::shared_ptr<const CompiledGrammar> grammar_;
  MatchState state_;
  bool finished_ = false;
  std::shared_ptr<const TokenMask> mask_;  // of the current state, once asked for
  std::unique_ptr<MaskJob> job_;           // of the current state, while it is computed in slices
};

}  // namespace minigen
