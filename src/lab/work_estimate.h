#pragma once
// How long the lab will take, before it runs: every section's forward calls and tokens counted from the run's
// sizes (the same counts section 2 checks), priced with a per-model calibration of this machine. The estimate
// picks what to shrink for big models and feeds the ETA on the progress lines; the report prints it beside the
// measured time of each section.
#include <cstdint>
#include <string>
#include <vector>

namespace minigen::lab {

struct LabScale;

// Forward passes and the tokens they feed.
struct ForwardWork {
  int64_t calls = 0;
  int64_t tokens = 0;

  ForwardWork& operator+=(const ForwardWork& other) {
    calls += other.calls;
    tokens += other.tokens;
    return *this;
  }
};

// The work of one generate() run, eos ignored: N forward calls; with the cache rows · (P + N − 1) tokens, without
// rows · (P·N + N(N−1)/2).
ForwardWork generation_work(int64_t prompt_tokens, int64_t new_tokens, int64_t rows, bool use_cache);

// A model's price on this machine: a forward call costs a fixed part (reading every weight once, whatever the
// batch) plus a part per fed token. Attention's growth with the context is left out: it is small at the lab's
// lengths next to the matrix products.
struct ForwardCost {
  double seconds_per_call = 0;
  double seconds_per_token = 0;

  double seconds(const ForwardWork& work) const {
    return static_cast<double>(work.calls) * seconds_per_call + static_cast<double>(work.tokens) * seconds_per_token;
  }
  // From two timed forwards: a prefill of `prefill_tokens` tokens and a one-token decode step.
  static ForwardCost from_timings(double prefill_seconds, int prefill_tokens, double decode_step_seconds);
};

// The prompt lengths the sections use, which depend on the models' tokenizers.
struct LabPromptSizes {
  std::vector<int> equivalence_prompts;  // section 1's base-model prompts (the last one is the 183-token prompt)
  std::vector<int> chat_prompts;         // the SFT sections' chat prompts, in LabContext::chat_messages() order
};

struct SectionWork {
  ForwardWork base;
  ForwardWork sft;
};

// The eight sections' work at this scale, in section order. Runs the lab computes once and reuses (the base
// model's greedy runs) are counted once.
std::vector<SectionWork> lab_work(const LabScale& scale, const LabPromptSizes& prompts);

// Seconds per section at these prices.
std::vector<double> section_seconds(const std::vector<SectionWork>& work, const ForwardCost& base,
                                    const ForwardCost& sft);

// "0.4 s", "48 s", "2 min 05 s", "1 h 02 min".
std::string duration_text(double seconds);

}  // namespace minigen::lab
