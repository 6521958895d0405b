#include "generate/sequence_check.h"

#include <cstdint>
#include <string>

#include "core/error.h"

namespace minigen {

void check_sequence(const ModelConfig& config, const SequenceCheck& sequence, std::string_view max_tokens_name) {
  const std::string limit(max_tokens_name);
  if (sequence.prompt.empty()) throw Error("the prompt is empty: nothing to continue from");
  if (sequence.max_new_tokens < 1) throw Error(limit + " must be at least 1");
  for (int id : sequence.prompt) {
    if (id < 0 || id >= config.vocab_size) {
      throw Error("prompt token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                  std::to_string(config.vocab_size) + ")");
    }
  }
  const int64_t total = static_cast<int64_t>(sequence.prompt.size()) + sequence.max_new_tokens;
  if (total > config.max_position_embeddings) {
    throw Error("prompt (" + std::to_string(sequence.prompt.size()) + " tokens) + " + limit + " (" +
                std::to_string(sequence.max_new_tokens) + ") = " + std::to_string(total) +
                " tokens exceeds the model's context of " + std::to_string(config.max_position_embeddings) + " tokens");
  }
  sequence.sampling.validate();
  sequence.sampling.check_vocabulary(config.vocab_size);
  const CompiledGrammar* grammar = sequence.grammar;
  if (grammar != nullptr &&
      (grammar->vocab_size() != config.vocab_size || grammar->vocabulary().eos() != config.eos_token_id)) {
    throw Error("the grammar was compiled for a vocabulary of " + std::to_string(grammar->vocab_size()) +
                " ids with eos " + std::to_string(grammar->vocabulary().eos()) + "; the model has " +
                std::to_string(config.vocab_size) + " with eos " + std::to_string(config.eos_token_id));
  }
}

}  // namespace minigen
