#pragma once
// How long the lab will take, before it runs: every section's forward calls and tokens counted from the run's
// sizes (the same counts section 2 checks), priced with a per-model calibration of this machine. The estimate
// picks what to shrink for big models and feeds the ETA on the progress lines; the report prints it beside the
// measured time of each section.
#include <cstdint>
#include <string>
#include <vector>

#include "lab/lab_scale.h"

namespace minigen::lab {

// Forward passes, the tokens they feed, the (query, key) pairs their attention scores, and the rows that choose a
// token after each call.
struct ForwardWork {
  int64_t calls = 0;
  int64_t tokens = 0;
  int64_t attention_pairs = 0;  // a token at position p attends to p + 1 positions
  int64_t row_steps = 0;        // rows × steps: one token chosen (sampled or argmax) per row per call

  ForwardWork& operator+=(const ForwardWork& other) {
    calls += other.calls;
    tokens += other.tokens;
    attention_pairs += other.attention_pairs;
    row_steps += other.row_steps;
    return *this;
  }
};

// The module's counts of tokens fed to forward for a P-token prompt and N new tokens. With the cache: the prompt
// once (prefill), then the N − 1 tokens generated before the last one (the last is never fed), P + N − 1. Without:
// every step re-feeds the prompt and all tokens generated so far, Σ_{s=0}^{N−1} (P + s) = P·N + N(N−1)/2.
inline int64_t cached_forward_tokens(int64_t prompt_tokens, int64_t new_tokens) {
  return prompt_tokens + new_tokens - 1;
}
inline int64_t uncached_forward_tokens(int64_t prompt_tokens, int64_t new_tokens) {
  return prompt_tokens * new_tokens + new_tokens * (new_tokens - 1) / 2;
}

// The work of one generate() run, eos ignored: N forward calls; with the cache rows · (P + N − 1) tokens, without
// rows · (P·N + N(N−1)/2).
ForwardWork generation_work(int64_t prompt_tokens, int64_t new_tokens, int64_t rows, bool use_cache);

// A model's price on this machine: each forward call reads every weight once whatever the batch (per call), each
// fed token passes through the matrix products (per token), attention grows with the positions attended (per
// pair), and each row chooses a token after each call (per row step: sorting the vocabulary for top-k/top-p).
struct ForwardCost {
  double seconds_per_call = 0;
  double seconds_per_token = 0;
  double seconds_per_attention_pair = 0;
  double seconds_per_row_step = 0;

  double seconds(const ForwardWork& work) const {
    return static_cast<double>(work.calls) * seconds_per_call + static_cast<double>(work.tokens) * seconds_per_token +
           static_cast<double>(work.attention_pairs) * seconds_per_attention_pair +
           static_cast<double>(work.row_steps) * seconds_per_row_step;
  }
};

// What calibrate() times: a one-token decode step after a short prompt, two prefills of different lengths (greedy,
// one row each), and a decode step of `batch_rows` rows sampling with MiniMind's defaults.
struct CalibrationTimings {
  int decode_position = 0;  // the step feeds one token at this position
  double decode_step_seconds = 0;
  int short_prefill_tokens = 0;
  double short_prefill_seconds = 0;
  int long_prefill_tokens = 0;
  double long_prefill_seconds = 0;
  int batch_rows = 0;
  int batch_position = 0;
  double batch_step_seconds = 0;
};

// Solves for the four prices (a price that comes out negative from the machine's noise is set to 0 and the others
// refitted).
ForwardCost price_from_timings(const CalibrationTimings& timings);

// The prompt lengths the sections use, which depend on the models' tokenizers.
struct LabPromptSizes {
  std::vector<int> equivalence_prompts;  // section 1's base-model prompts (the last one is the 183-token prompt)
  std::vector<int> chat_prompts;         // the SFT sections' chat prompts, in LabContext::chat_messages() order
  // Section 9's held-out documents (bos + text + eos) with each model's tokenizer, in file order.
  std::vector<int> base_documents;
  std::vector<int> sft_documents;
};

struct SectionWork {
  ForwardWork base;
  ForwardWork sft;
};

// The eleven sections' work at this scale, in section order. Runs the lab computes once and reuses (the base
// model's greedy runs) are counted once.
std::vector<SectionWork> lab_work(const LabScale& scale, const LabPromptSizes& prompts);

// Seconds per section at these prices.
std::vector<double> section_seconds(const std::vector<SectionWork>& work, const ForwardCost& base,
                                    const ForwardCost& sft);

// "0.4 s", "48 s", "2 min 05 s", "1 h 02 min".
std::string duration_text(double seconds);

}  // namespace minigen::lab
