#pragma once
// How much the lab measures: the grids, repeats and sample counts of a quick or full run, cut to the models'
// context and shrunk to a time budget for big models. Every cut is written down, so the report can say what was
// left out and why. Plain data at the bottom of the lab: the work estimate, the budget fit and the sections read it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace minigen::lab {

// The module's experiment: a 183-token prompt and 64 new tokens.
inline constexpr int kHeadlinePromptTokens = 183;
inline constexpr int kHeadlineNewTokens = 64;
// Section 9's perplexity windows: `minigen perplexity`'s default --ctx (a longer document is cut into pieces).
inline constexpr int kPerplexityContext = 256;

// Fixed sizes of the sections that the work estimate counts: the temperature settings of section 5, the filters of
// section 6 (four top-p values and top-k for comparison), and section 9's types, how often each weight type's
// decode is timed (the fastest run counts) and the prompt that decode continues.
inline constexpr int kTemperatureSettings = 6;
inline constexpr int kTopPRuns = 5;
inline constexpr int kShrinkingKvTypes = 4;
inline constexpr int kShrinkingWeightTypes = 4;
inline constexpr int kShrinkingTimedDecodes = 2;
inline constexpr int kShrinkingDecodePromptTokens = 32;
// Section 9 decodes the first questions only: a learner's file may hold many, and each costs a batch row per type.
inline constexpr std::size_t kShrinkingChatPrompts = 4;
// Section 11 answers the first questions too, once per run it compares: the base, an adapter with B = 0, the adapter,
// and the adapter merged (each a greedy batch and one pass scoring a reference text). Its mixed batch has 8 rows:
// 2 on the base weights alone and 2 on each of 3 adapters.
inline constexpr std::size_t kAdapterChatPrompts = 4;
inline constexpr int kAdapterGreedyRuns = 4;
inline constexpr int kAdapterScoringPasses = 5;
inline constexpr int kMixedBatchRows = 8;
inline constexpr int kMixedBatchAdapters = 3;

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
  int shrinking_new_tokens = kHeadlineNewTokens;  // greedy steps compared with the fp32 cache's
  int shrinking_decode_tokens = 32;               // the timed decode of each weight type
  int shrinking_documents = 0;                    // held-out documents each perplexity scores
  int constraining_samples = 30;                  // answers sampled with and without a JSON schema
  int constraining_new_tokens = 64;
  int adapter_new_tokens = 48;     // greedy tokens per answer, with and without the adapter
  int adapter_timed_steps = 32;    // decode steps of each timed run of the mixed batch
  int adapter_timing_repeats = 5;  // runs of each batch, in turn

  std::vector<std::string> cuts;  // what was cut from the default sizes, and why, one sentence each

  // The default sizes: the full run takes about 40 s on the shipped 4.9 M-parameter models, the quick one 10 s, plus
  // section 9 (mostly its 24 perplexity passes: a few seconds quick, a minute or two full).
  static LabScale for_run(bool quick);
};

// Drops grid points, sweep points and prompt lengths that do not fit the context (base: P + N positions; SFT: the
// longest chat prompt plus the new tokens). Throws minigen::Error when even the headline run (183 + 64 positions)
// or a short chat answer does not fit.
void fit_to_context(LabScale& scale, int base_context, int sft_context, int longest_chat_prompt);

// Removes the values above `limit`; returns the removed ones (the cuts name them with list_text).
std::vector<int> drop_above(std::vector<int>& values, int limit);
// "16, 64, 512"
std::string list_text(const std::vector<int>& values);

}  // namespace minigen::lab
