#pragma once
// What every lab section shares: the two models, their forward passes, the sizes of the run (quick or full), the
// prompts, the progress log, and a memo of the base model's greedy runs, so that a run one section needs again
// (183 tokens, 64 new, without the cache: seconds of work) is computed once.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "checkpoint/model_loader.h"
#include "generate/generate.h"
#include "model/transformer.h"
#include "ops/thread_pool.h"

namespace minigen::lab {

struct LabOptions {
  std::filesystem::path base_model;  // a pretrained (base) model: sections 1–3 and 8's greedy check
  std::filesystem::path sft_model;   // a chat (SFT) model: sections 5–8
  std::filesystem::path out_dir;
  bool quick = false;  // smaller grids, fewer repeats and samples: under a minute on 2 cores
  int threads = 0;     // 0: one per core
};

// How much each section measures. The full run stays under ten minutes on 2 cores; the quick one under one.
struct LabScale {
  bool quick = false;
  int equivalence_new_tokens = 64;
  bool equivalence_sampled_long_prompt = true;  // also sample the 183-token prompt with and without the cache
  std::vector<int> grid_prompt_tokens;          // P
  std::vector<int> grid_new_tokens;             // N
  std::vector<int> sweep_new_tokens;            // N at P = 183, for the plots
  int64_t max_uncached_grid_tokens = 0;         // grid points whose no-cache run feeds more are left out
  int timing_repeats = 1;
  std::vector<int> ttft_prompt_tokens;
  int ttft_new_tokens = 8;
  int kv_max_length = 0;
  int temperature_samples = 30;
  int temperature_prompt_count = 0;
  int temperature_new_tokens = 0;
  int top_p_prompt_count = 0;
  int top_p_rows = 0;
  int top_p_new_tokens = 0;
  int seed_new_tokens = 0;

  static LabScale for_run(bool quick);
};

// The module's experiment: a 183-token prompt and 64 new tokens.
inline constexpr int kHeadlinePromptTokens = 183;
inline constexpr int kHeadlineNewTokens = 64;

class LabContext {
 public:
  LabContext(const LabOptions& options, std::ostream& progress);

  const LabScale& scale() const { return scale_; }
  const LoadedModel& base() const { return base_; }
  const LoadedModel& sft() const { return sft_; }
  Transformer& base_transformer() { return *base_transformer_; }
  Transformer& sft_transformer() { return *sft_transformer_; }
  int threads() const { return pool_.num_threads(); }

  // "[lab  12.3 s] message" on the progress stream.
  void progress(std::string_view message);

  // examples/genesis-183.txt in the base-model form (bos + text): 183 tokens with the shipped tokenizer.
  const std::vector<int>& genesis_prompt() const { return genesis_prompt_; }
  // A base-model prompt of exactly `tokens` tokens: the genesis prompt cut short, or followed by its text again.
  std::vector<int> base_prompt_of_length(int tokens) const;
  // A user message in the SFT model's ChatML form, thinking off (how the SFT model was trained).
  std::vector<int> chat_prompt(std::string_view user_message) const;
  // User messages for the SFT sections.
  static const std::vector<std::string>& chat_messages();

  // The base model, greedy, ignore_eos, step logits kept; computed once per (prompt, new tokens, cache).
  const GenerateResult& base_greedy_run(const std::vector<int>& prompt, int new_tokens, bool use_cache);
  // The options of those runs, for sections that repeat one to time it.
  static GenerateOptions base_greedy_options(int new_tokens, bool use_cache);

 private:
  LabScale scale_;
  std::ostream& progress_;
  std::chrono::steady_clock::time_point start_;
  LoadedModel base_;
  LoadedModel sft_;
  ThreadPool pool_;
  std::unique_ptr<Transformer> base_transformer_;
  std::unique_ptr<Transformer> sft_transformer_;
  std::vector<int> genesis_prompt_;
  std::vector<int> genesis_text_tokens_;  // without bos: what is repeated to make longer prompts
  std::map<std::tuple<std::vector<int>, int, bool>, GenerateResult> base_greedy_runs_;
};

}  // namespace minigen::lab
