#pragma once
// The checks every sequence passes once, where it enters the library (generate(), the serving scheduler), so that
// the code behind them can trust its input: a prompt to continue, ids inside the vocabulary, room in the model's
// context, valid sampling settings, a grammar compiled for this vocabulary.
#include <span>
#include <string_view>

#include "grammar/compiled_grammar.h"
#include "model/config.h"
#include "sampling/sampling_params.h"

namespace minigen {

struct SequenceCheck {
  std::span<const int> prompt;
  int max_new_tokens;
  const SamplingParams& sampling;
  const CompiledGrammar* grammar;  // nullptr: free text
};

// Throws minigen::Error (InvalidSamplingParam for sampling settings) with a message for the user. `max_tokens_name`
// is what the caller's user calls the limit on new tokens ("max_new_tokens", or the API's "max_tokens").
void check_sequence(const ModelConfig& config, const SequenceCheck& sequence, std::string_view max_tokens_name);

}  // namespace minigen
