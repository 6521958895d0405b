#pragma once
// `minigen bench-serve --rollout`: the work MiniMind's RL trainers send their rollout engine
// (trainer/rollout_engine.py, SGLangRolloutEngine), timed through the server's public /generate: B prompts, each
// repeated G times, N new tokens each, temperature 0.8, return_logprob — the request train_grpo.py makes every step.
// Every row runs all N tokens (ignore_eos), so the token count is B·G·N and runs compare. Optionally a weight update
// from disk between rounds
// (/update_weights_from_disk, as update_policy does after each optimiser step), timed from the client.
//
// Each answer is checked as the trainer would use it: one result per row, N output ids each, one logprob per id,
// every logprob finite and ≤ 0. A wrong answer fails the run rather than yield a number.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minigen::load_test {

struct RolloutBenchOptions {
  int batch = 4;           // B: prompts per rollout
  int generations = 6;     // G: copies of each prompt (MiniMind's num_generations)
  int new_tokens = 256;    // N: max_gen_len
  int prompt_tokens = 40;  // P: each prompt's length (ids drawn from the seed)
  int rounds = 2;          // rollouts, one after another
  double temperature = 0.8;
  int seed = 1;
  int vocab_size = 6400;    // prompt ids are drawn from [3, vocab_size)
  std::string update_from;  // non-empty: POST /update_weights_from_disk with it before every round but the first
};

struct RolloutRound {
  double wall_seconds = 0;           // the /generate request, from the client
  double update_seconds = 0;         // the weight update before it (0: none), from the client
  double server_load_seconds = 0;    // the update's report: reading and packing
  double server_switch_seconds = 0;  // and the switch
  long long tokens = 0;
  int cached_tokens = 0;  // prompt tokens the rows borrowed from the prefix cache
  double tokens_per_second() const { return wall_seconds > 0 ? static_cast<double>(tokens) / wall_seconds : 0; }
};

struct RolloutBenchReport {
  RolloutBenchOptions options;
  std::vector<RolloutRound> rounds;
  std::vector<std::string> errors;  // empty: every answer had the shape the trainer needs
  bool passed() const { return errors.empty() && !rounds.empty(); }
};

RolloutBenchReport run_rollout_bench(const std::string& url, const RolloutBenchOptions& options);

nlohmann::json rollout_report_json(const RolloutBenchReport& report);

}  // namespace minigen::load_test
