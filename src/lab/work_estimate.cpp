#include "lab/work_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <tuple>

namespace minigen::lab {
namespace {

// The base model's greedy runs, counted once as LabContext memoises them.
class BaseGreedyRuns {
 public:
  explicit BaseGreedyRuns(ForwardWork& into) : into_(into) {}
  void run(int prompt_tokens, int new_tokens, bool use_cache) {
    if (seen_.insert({prompt_tokens, new_tokens, use_cache}).second) {
      into_.get() += generation_work(prompt_tokens, new_tokens, 1, use_cache);
    }
  }
  void retarget(ForwardWork& into) { into_ = std::ref(into); }

 private:
  std::reference_wrapper<ForwardWork> into_;
  std::set<std::tuple<int, int, bool>> seen_;
};

// One perplexity pass over the first `count` documents: each cut into pieces of at most context + 1 tokens, every
// piece fed whole (up to 16 per call), and a softmax over the vocabulary at each of its positions (priced as a row
// step).
ForwardWork perplexity_work(const std::vector<int>& document_tokens, int count) {
  ForwardWork work;
  int64_t pieces = 0;
  const int64_t width = kPerplexityContext + 1;
  for (int d = 0; d < std::min(count, static_cast<int>(document_tokens.size())); ++d) {
    for (int64_t start = 0; start + 1 < document_tokens[d]; start += width) {
      const int64_t length = std::min<int64_t>(width, document_tokens[d] - start);
      ++pieces;
      work.tokens += length;
      work.attention_pairs += length * (length + 1) / 2;
      work.row_steps += length - 1;
    }
  }
  work.calls = (pieces + 15) / 16;
  return work;
}

// All the prompts as the rows of one greedy run with the cache: their tokens and pairs add up, the calls do not.
ForwardWork batch_work(const std::vector<int>& prompts, int new_tokens) {
  ForwardWork work;
  for (int prompt : prompts) work += generation_work(prompt, new_tokens, 1, true);
  work.calls = new_tokens;
  return work;
}

}  // namespace

ForwardWork generation_work(int64_t prompt_tokens, int64_t new_tokens, int64_t rows, bool use_cache) {
  if (new_tokens <= 0) return {};
  // Σ_{q=from}^{to−1} (q + 1): the pairs of a call that feeds positions from … to − 1.
  const auto pairs = [](int64_t from, int64_t to) { return (to * (to + 1) - from * (from + 1)) / 2; };
  ForwardWork work;
  work.calls = new_tokens;
  work.row_steps = rows * new_tokens;
  for (int64_t step = 0; step < new_tokens; ++step) {
    const int64_t length = prompt_tokens + step;  // the sequence before this step's forward
    const int64_t from = use_cache && step > 0 ? length - 1 : 0;
    work.tokens += rows * (length - from);
    work.attention_pairs += rows * pairs(from, length);
  }
  return work;
}

ForwardCost price_from_timings(const CalibrationTimings& t) {
  // Unknowns: per call c, per token k, per pair a. One-row greedy runs (argmax is cheap, so no row-step term):
  //   decode:         c +   1·k + (pos + 1)·a        = decode_step_seconds
  //   short prefill:  c +   S·k + S(S+1)/2·a         = short_prefill_seconds
  //   long prefill:   c +   L·k + L(L+1)/2·a         = long_prefill_seconds
  const double s = t.short_prefill_tokens;
  const double l = t.long_prefill_tokens;
  const double pair_decode = t.decode_position + 1.0;
  const double pair_short = s * (s + 1) / 2;
  const double pair_long = l * (l + 1) / 2;
  // Differences from the decode step remove c: (S − 1)k + (pS − pD)a = dS, (L − 1)k + (pL − pD)a = dL.
  const double d_short = t.short_prefill_seconds - t.decode_step_seconds;
  const double d_long = t.long_prefill_seconds - t.decode_step_seconds;
  const double m11 = s - 1, m12 = pair_short - pair_decode, m21 = l - 1, m22 = pair_long - pair_decode;
  const double determinant = m11 * m22 - m12 * m21;
  ForwardCost cost;
  if (determinant != 0) {
    cost.seconds_per_token = (d_short * m22 - m12 * d_long) / determinant;
    cost.seconds_per_attention_pair = (m11 * d_long - m21 * d_short) / determinant;
  }
  if (cost.seconds_per_attention_pair < 0 || cost.seconds_per_token < 0) {
    cost.seconds_per_attention_pair = 0;
    cost.seconds_per_token = std::max(0.0, d_long / std::max(1.0, l - 1));
  }
  cost.seconds_per_call =
      std::max(0.0, t.decode_step_seconds - cost.seconds_per_token - pair_decode * cost.seconds_per_attention_pair);
  // The batched sampled step: c + B·k + B·(pos + 1)·a + B·r.
  if (t.batch_rows > 0) {
    const double rows = t.batch_rows;
    const double rest = t.batch_step_seconds - cost.seconds_per_call - rows * cost.seconds_per_token -
                        rows * (t.batch_position + 1.0) * cost.seconds_per_attention_pair;
    cost.seconds_per_row_step = std::max(0.0, rest / rows);
  }
  return cost;
}

std::vector<SectionWork> lab_work(const LabScale& scale, const LabPromptSizes& prompts) {
  std::vector<SectionWork> sections(11);
  BaseGreedyRuns greedy(sections[0].base);

  // 1. Same tokens with and without the cache: greedy (shared) and sampled (its own runs) on each prompt.
  for (int prompt : prompts.equivalence_prompts) {
    greedy.run(prompt, scale.equivalence_new_tokens, true);
    greedy.run(prompt, scale.equivalence_new_tokens, false);
  }
  for (int prompt : prompts.equivalence_prompts) {
    if (prompt > 64 && !scale.equivalence_sampled_long_prompt) continue;
    for (const bool cache : {true, false}) {
      sections[0].base += generation_work(prompt, scale.equivalence_new_tokens, 1, cache);
    }
  }

  // 2. Tokens entering forward: the grid, then the N sweep at P = 183 (both modes).
  greedy.retarget(sections[1].base);
  for (int prompt : scale.grid_prompt_tokens) {
    for (int new_tokens : scale.grid_new_tokens) {
      greedy.run(prompt, new_tokens, true);
      if (uncached_forward_tokens(prompt, new_tokens) <= scale.max_uncached_grid_tokens)
        greedy.run(prompt, new_tokens, false);
    }
  }
  for (int new_tokens : scale.sweep_new_tokens) {
    greedy.run(kHeadlinePromptTokens, new_tokens, true);
    greedy.run(kHeadlinePromptTokens, new_tokens, false);
  }

  // 3. Times: each point once from the shared runs, then repeats − 1 more.
  greedy.retarget(sections[2].base);
  const auto timed = [&](int prompt, int new_tokens) {
    for (const bool cache : {true, false}) {
      greedy.run(prompt, new_tokens, cache);
      for (int repeat = 1; repeat < scale.timing_repeats; ++repeat) {
        sections[2].base += generation_work(prompt, new_tokens, 1, cache);
      }
    }
  };
  timed(kHeadlinePromptTokens, kHeadlineNewTokens);
  for (int prompt : scale.ttft_prompt_tokens) timed(prompt, scale.ttft_new_tokens);

  // 4. Cache bytes: two real generations.
  greedy.retarget(sections[3].base);
  greedy.run(37, kHeadlineNewTokens, true);
  greedy.run(kHeadlinePromptTokens, kHeadlineNewTokens, true);

  // 5. and 6. Batches of samples on each chat prompt, with the cache.
  const int chat_prompts = static_cast<int>(prompts.chat_prompts.size());
  const int temperature_settings = kTemperatureSettings;
  const int top_p_runs = kTopPRuns;
  for (int p = 0; p < std::min(scale.temperature_prompt_count, chat_prompts); ++p) {
    sections[4].sft += generation_work(prompts.chat_prompts[p], scale.temperature_new_tokens,
                                       static_cast<int64_t>(scale.temperature_samples) * temperature_settings, true);
  }
  for (int p = 0; p < std::min(scale.top_p_prompt_count, chat_prompts); ++p) {
    sections[5].sft += generation_work(prompts.chat_prompts[p], scale.top_p_new_tokens,
                                       static_cast<int64_t>(scale.top_p_rows) * top_p_runs, true);
  }
  // (The settings run one after another, not as one batch: the calls multiply, not the rows.)
  sections[4].sft.calls *= temperature_settings;
  sections[5].sft.calls *= top_p_runs;

  // 7. eos padding reuses section 5's batches. 8. Seeds: four pairs on the first chat prompt (five runs with the
  // cache, three without), the same request alone, then in a batch of three prompts (the first again when there are
  // fewer than three).
  if (chat_prompts >= 1) {
    const int first = prompts.chat_prompts[0];
    const int new_tokens = scale.seed_new_tokens;
    for (int run = 0; run < 6; ++run) sections[7].sft += generation_work(first, new_tokens, 1, true);
    for (int run = 0; run < 3; ++run) sections[7].sft += generation_work(first, new_tokens, 1, false);
    // The batch: three rows' work in one set of calls.
    ForwardWork batch = generation_work(first, new_tokens, 1, true);
    batch += generation_work(prompts.chat_prompts[1 % chat_prompts], new_tokens, 1, true);
    batch += generation_work(prompts.chat_prompts[2 % chat_prompts], new_tokens, 1, true);
    batch.calls = new_tokens;
    sections[7].sft += batch;
  }

  // 9. Shrinking the cache: each KV type generates on every prompt of the model as one batch and scores the held-out
  // documents; each weight type (base model) times a short decode and scores them too. The f32 reference's pass is
  // shared by every type and is the f32 type's own, so each type costs one perplexity pass.
  const std::vector<int> shrinking_chat_prompts(
      prompts.chat_prompts.begin(),
      prompts.chat_prompts.begin() + std::min(prompts.chat_prompts.size(), kShrinkingChatPrompts));
  for (int kv_type = 0; kv_type < kShrinkingKvTypes; ++kv_type) {
    sections[8].base += batch_work(prompts.equivalence_prompts, scale.shrinking_new_tokens);
    sections[8].sft += batch_work(shrinking_chat_prompts, scale.shrinking_new_tokens);
    sections[8].base += perplexity_work(prompts.base_documents, scale.shrinking_documents);
    sections[8].sft += perplexity_work(prompts.sft_documents, scale.shrinking_documents);
  }
  for (int weight_type = 0; weight_type < kShrinkingWeightTypes; ++weight_type) {
    for (int run = 0; run < kShrinkingTimedDecodes; ++run) {
      sections[8].base += generation_work(kShrinkingDecodePromptTokens, scale.shrinking_decode_tokens + 1, 1, true);
    }
    sections[8].base += perplexity_work(prompts.base_documents, scale.shrinking_documents);
  }
  // 10. Constraining: one batch of samples on a chat question, free and with a schema (the mask's time is not
  // counted; it is a small part of a step).
  if (!prompts.chat_prompts.empty()) {
    for (int run = 0; run < 2; ++run) {
      ForwardWork batch =
          generation_work(prompts.chat_prompts[0], scale.constraining_new_tokens, scale.constraining_samples, true);
      batch.calls = scale.constraining_new_tokens;
      sections[9].sft += batch;
    }
  }
  // 11. Adapters: greedy batches of the first questions (base, B = 0, the adapter, merged), passes scoring a
  // reference text (each question and its answer in one call), and the mixed batch of 8 rows against the same rows
  // on the base alone, each run after a warm-up (the low-rank terms are a small part of a step and not counted).
  if (!prompts.chat_prompts.empty()) {
    const std::vector<int> adapter_prompts(
        prompts.chat_prompts.begin(),
        prompts.chat_prompts.begin() + std::min(prompts.chat_prompts.size(), kAdapterChatPrompts));
    for (int run = 0; run < kAdapterGreedyRuns; ++run) {
      sections[10].sft += batch_work(adapter_prompts, scale.adapter_new_tokens);
    }
    for (int pass = 0; pass < kAdapterScoringPasses; ++pass) {
      ForwardWork scoring;
      for (int prompt : adapter_prompts) scoring += generation_work(prompt + scale.adapter_new_tokens - 1, 1, 1, true);
      scoring.calls = 1;
      sections[10].sft += scoring;
    }
    ForwardWork batch = generation_work(prompts.chat_prompts[0], scale.adapter_timed_steps + 1, kMixedBatchRows, true);
    for (int run = 0; run < 2 * (scale.adapter_timing_repeats + 1); ++run) sections[10].sft += batch;
  }
  return sections;
}

std::vector<double> section_seconds(const std::vector<SectionWork>& work, const ForwardCost& base,
                                    const ForwardCost& sft) {
  std::vector<double> seconds;
  for (const SectionWork& section : work) seconds.push_back(base.seconds(section.base) + sft.seconds(section.sft));
  return seconds;
}

std::string duration_text(double seconds) {
  const long long total = std::llround(std::max(0.0, seconds));
  char text[48];
  if (seconds < 9.95) {
    std::snprintf(text, sizeof text, "%.1f s", std::max(0.0, seconds));
  } else if (total < 60) {
    std::snprintf(text, sizeof text, "%lld s", total);
  } else if (total < 3600) {
    std::snprintf(text, sizeof text, "%lld min %02lld s", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%lld h %02lld min", total / 3600, (total % 3600) / 60);
  }
  return text;
}

}  // namespace minigen::lab
