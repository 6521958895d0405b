#include "lab/lab_scale.h"

#include <gtest/gtest.h>

#include <numeric>

#include "core/error.h"
#include "lab/budget_fit.h"
#include "lab/work_estimate.h"

namespace minigen::lab {
namespace {

TEST(WorkEstimate, GenerationWorkIsTheModulesFormulas) {
  const ForwardWork cached = generation_work(183, 64, 1, true);
  EXPECT_EQ(cached.calls, 64);
  EXPECT_EQ(cached.tokens, 246);  // P + N − 1
  const ForwardWork uncached = generation_work(183, 64, 1, false);
  EXPECT_EQ(uncached.calls, 64);
  EXPECT_EQ(uncached.tokens, 13728);  // P·N + N(N−1)/2
  EXPECT_EQ(generation_work(10, 5, 3, true).tokens, 3 * 14);
  EXPECT_EQ(generation_work(10, 0, 3, true).calls, 0);
}

TEST(WorkEstimate, AttentionPairsAndRowSteps) {
  // Cached: the prefill's positions 0…P−1 attend to 1…P keys, then step s's one token at P + s − 1 to P + s.
  const ForwardWork cached = generation_work(3, 3, 2, true);
  EXPECT_EQ(cached.attention_pairs, 2 * ((1 + 2 + 3) + 4 + 5));
  EXPECT_EQ(cached.row_steps, 6);
  // Uncached: every step re-feeds the whole sequence: 1+2+3, then 1+…+4, then 1+…+5.
  EXPECT_EQ(generation_work(3, 3, 1, false).attention_pairs, 6 + 10 + 15);
}

// Prices of 10 ms per call, 1 ms per token, 1 µs per attention pair and 0.5 ms per row step, turned into the
// timings calibrate() would see, come back out.
TEST(WorkEstimate, CalibrationRecoversThePrices) {
  const ForwardCost truth{0.010, 0.001, 1e-6, 0.0005};
  CalibrationTimings timings;
  timings.decode_position = 36;
  timings.decode_step_seconds = truth.seconds({1, 1, 37, 0});
  timings.short_prefill_tokens = 32;
  timings.short_prefill_seconds = truth.seconds({1, 32, 32 * 33 / 2, 0});
  timings.long_prefill_tokens = 256;
  timings.long_prefill_seconds = truth.seconds({1, 256, 256 * 257 / 2, 0});
  timings.batch_rows = 8;
  timings.batch_position = 36;
  timings.batch_step_seconds = truth.seconds({1, 8, 8 * 37, 8});
  const ForwardCost cost = price_from_timings(timings);
  EXPECT_NEAR(cost.seconds_per_call, truth.seconds_per_call, 1e-9);
  EXPECT_NEAR(cost.seconds_per_token, truth.seconds_per_token, 1e-9);
  EXPECT_NEAR(cost.seconds_per_attention_pair, truth.seconds_per_attention_pair, 1e-12);
  EXPECT_NEAR(cost.seconds_per_row_step, truth.seconds_per_row_step, 1e-9);
  // Noise that would make attention free or negative: the pair price is dropped, the token price refitted.
  timings.long_prefill_seconds = truth.seconds({1, 200, 0, 0});
  const ForwardCost noisy = price_from_timings(timings);
  EXPECT_EQ(noisy.seconds_per_attention_pair, 0.0);
  EXPECT_GT(noisy.seconds_per_token, 0.0);
}

// Section 1 of the quick run on prompts of 4, 9, 6 and 183 tokens: greedy with and without the cache on each
// (64 new tokens), sampled on the three short ones only. Section 8: six cached and three uncached runs of 32 tokens
// on the first chat prompt, then a batch of the first three. Section 9: per KV type one 64-step batch of the model's
// prompts and one perplexity pass; per weight type two timed decodes (32 + 32 tokens) and one perplexity pass (the
// f32 reference's logits are shared by every type, and are the f32 type's own).
TEST(WorkEstimate, CountsEachSectionsRuns) {
  const LabScale scale = LabScale::for_run(true);
  // Held-out documents of 10 and 300 tokens for the base model (300 is cut into 257 + 43), one of 12 for the SFT.
  const LabPromptSizes prompts{{4, 9, 6, 183}, {20, 22, 25, 30}, {10, 300}, {12}};
  const std::vector<SectionWork> work = lab_work(scale, prompts);
  ASSERT_EQ(work.size(), 11u);
  EXPECT_EQ(work[8].base.calls, 4 * 64 + 4 * 1 + 4 * 2 * 33 + 4 * 1);
  EXPECT_EQ(work[8].base.tokens, 4 * (202 + 4 * 63) + 8 * 310 + 8 * (32 + 32));
  EXPECT_EQ(work[8].sft.calls, 4 * 64 + 4 * 1);
  EXPECT_EQ(work[8].sft.tokens, 4 * (97 + 4 * 63) + 4 * 12);
  EXPECT_EQ(work[0].base.calls, (8 + 6) * 64);
  EXPECT_EQ(work[0].base.tokens, (202 + 4 * 63) + (64 * 202 + 4 * 2016) + (19 + 3 * 63) + (64 * 19 + 3 * 2016));
  EXPECT_EQ(work[0].sft.calls, 0);
  EXPECT_EQ(work[7].sft.calls, 10 * 32);
  EXPECT_EQ(work[7].sft.tokens, 6 * (20 + 31) + 3 * (20 * 32 + 32 * 31 / 2) + (20 + 22 + 25 + 3 * 31));
  // Section 4's two runs (37 and 183 tokens, 64 new, with the cache): the 183-token one was already run.
  EXPECT_EQ(work[3].base.tokens, 37 + 63);
  EXPECT_EQ(work[6].base.calls + work[6].sft.calls, 0);  // eos padding reuses section 5's batches
  // Section 11: four greedy batches of the four questions (16 tokens), five passes scoring question + answer, and
  // the 8-row batch of 16 timed steps after its prefill, mixed and alone, a warm-up and 3 runs each.
  EXPECT_EQ(work[10].base.calls, 0);
  EXPECT_EQ(work[10].sft.calls, 4 * 16 + 5 + 8 * 17);
  EXPECT_EQ(work[10].sft.tokens, 4 * (97 + 4 * 15) + 5 * (97 + 4 * 15) + 8 * 8 * (20 + 16));
}

TEST(LabScaleBudget, CheapModelsKeepTheDefaultSizes) {
  LabScale scale = LabScale::for_run(false);
  const LabPromptSizes prompts{{4, 9, 6, 183}, {20, 22, 25, 30}, {}, {}};
  const ForwardCost cheap{0.0005, 0.00005, 0, 0};
  const BudgetFit fit = fit_to_budget(scale, prompts, cheap, cheap, kFullBudgetSeconds);
  EXPECT_TRUE(scale.cuts.empty());
  EXPECT_EQ(fit.estimated_seconds, fit.estimated_seconds_before);
  EXPECT_NEAR(std::accumulate(fit.section_seconds.begin(), fit.section_seconds.end(), 0.0), fit.estimated_seconds,
              1e-9);
}

TEST(LabScaleBudget, ExpensiveModelsAreCutInOrderUntilTheyFit) {
  LabScale scale = LabScale::for_run(false);
  const LabPromptSizes prompts{{4, 9, 6, 183}, {20, 22, 25, 30}, {}, {}};
  const ForwardCost expensive{0.02, 0.004, 0, 0};  // about 10× the shipped model's prices
  const BudgetFit fit = fit_to_budget(scale, prompts, expensive, expensive, kFullBudgetSeconds);
  ASSERT_FALSE(scale.cuts.empty());
  EXPECT_EQ(scale.cuts[0], "timing medians of 3 runs instead of 5 (to fit the full run's budget of 25 min 00 s)");
  EXPECT_GT(fit.estimated_seconds_before, kFullBudgetSeconds);
  EXPECT_LE(fit.estimated_seconds, kFullBudgetSeconds);
  EXPECT_LT(scale.timing_repeats, 5);
  EXPECT_EQ(fit.section_seconds.size(), 11u);
}

TEST(LabScaleContext, ShortContextsDropTheLongestPoints) {
  LabScale scale = LabScale::for_run(false);
  fit_to_context(scale, 400, 32768, 30);
  EXPECT_EQ(scale.grid_prompt_tokens, (std::vector<int>{16, 64, 183}));  // 512 + N does not fit
  EXPECT_EQ(scale.grid_new_tokens, (std::vector<int>{16, 64}));          // 183 + 256 does not fit
  EXPECT_EQ(scale.sweep_new_tokens, (std::vector<int>{8, 16, 32, 64, 128}));
  EXPECT_EQ(scale.ttft_prompt_tokens, (std::vector<int>{16, 64, 128, 183, 256, 384}));
  EXPECT_EQ(scale.kv_max_length, 400);
  EXPECT_EQ(scale.cuts.size(), 4u);
  EXPECT_THROW(fit_to_context(scale, 246, 32768, 30), Error);
  LabScale short_chat = LabScale::for_run(true);
  fit_to_context(short_chat, 32768, 60, 30);
  EXPECT_EQ(short_chat.temperature_new_tokens, 30);
  EXPECT_EQ(short_chat.seed_new_tokens, 30);
  EXPECT_EQ(short_chat.shrinking_new_tokens, 30);
  EXPECT_THROW(fit_to_context(short_chat, 32768, 40, 30), Error);
}

TEST(WorkEstimate, DurationText) {
  EXPECT_EQ(duration_text(0.42), "0.4 s");
  EXPECT_EQ(duration_text(48.2), "48 s");
  EXPECT_EQ(duration_text(125), "2 min 05 s");
  EXPECT_EQ(duration_text(3720), "1 h 02 min");
}

}  // namespace
}  // namespace minigen::lab
