#include "cli/sampling_flags.h"

#include <climits>

#include "cli/flag_checks.h"

namespace minigen::cli {

void SamplingFlags::add_to(CLI::App& command) {
  command.add_option("--temperature", temperature, "divide logits by T before sampling (> 0)")
      ->check(finite_number())
      ->default_val(0.85f);
  command.add_option("--top-k", top_k, "keep the k most likely tokens; 0 turns it off")
      ->check(integer_in(0, INT_MAX))
      ->default_val(50);
  command.add_option("--top-p", top_p, "nucleus sampling threshold in (0, 1]; 1 turns it off")
      ->check(finite_number())
      ->default_val(0.85f);
  command.add_option("--min-p", min_p, "drop tokens below min-p × the top probability; 0 turns it off")
      ->check(finite_number())
      ->default_val(0.0f);
  command.add_option("--repetition-penalty", repetition_penalty,
                     "MiniMind's sign-aware penalty on every token already in the row; 1 turns it off")
      ->check(finite_number())
      ->default_val(1.0f);
  command.add_flag("--greedy", greedy, "take the most likely token (argmax) instead of sampling");
  command.add_option("--seed", seed, "seed of the per-row random streams, 0 to 2^64 − 1")
      ->check(seed_value())
      ->default_val(0);
  command.add_option("--top-p-rule", top_p_rule, "where top-p cuts: minimind (default), hf or llamacpp")
      ->default_val("minimind");
}

SamplingParams SamplingFlags::params() const {
  SamplingParams params;
  params.temperature = temperature;
  params.top_k = top_k;
  params.top_p = top_p;
  params.min_p = min_p;
  params.repetition_penalty = repetition_penalty;
  params.greedy = greedy;
  params.seed = seed;
  params.top_p_rule = parse_top_p_rule(top_p_rule);
  params.validate();
  return params;
}

}  // namespace minigen::cli
