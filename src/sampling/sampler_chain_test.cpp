#include "sampling/sampler_chain.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "sampling/counter_rng.h"
#include "sampling/sampling_test_util.h"
#include "sampling/token_choice.h"

namespace minigen {
namespace {

TEST(SamplerChainTest, StageNamesFollowMiniMindsOrder) {
  EXPECT_EQ(SamplerChain(SamplingParams{}).stage_names(),
            (std::vector<std::string>{"temperature(0.85)", "top-k(50)", "top-p(0.85, minimind)", "draw(seed=0)"}));
  const SamplingParams everything{.temperature = 0.7f,
                                  .top_k = 40,
                                  .top_p = 0.95f,
                                  .min_p = 0.05f,
                                  .repetition_penalty = 1.1f,
                                  .frequency_penalty = 0.5f,
                                  .presence_penalty = -0.25f,
                                  .logit_bias = {{3, -100.0f}, {7, 2.5f}},
                                  .top_p_rule = TopPRule::kHuggingFace,
                                  .seed = 9};
  EXPECT_EQ(SamplerChain(everything).stage_names(),
            (std::vector<std::string>{"temperature(0.7)", "repetition-penalty(1.1)",
                                      "openai-penalties(frequency=0.5, presence=-0.25)", "logit-bias(2 tokens)",
                                      "top-k(40)", "top-p(0.95, hf)", "min-p(0.05)", "draw(seed=9)"}));
  // Greedy with T = 0 and every filter off: only the argmax is left.
  const SamplingParams bare_greedy{.temperature = 0.0f, .top_k = 0, .top_p = 1.0f, .greedy = true};
  EXPECT_EQ(SamplerChain(bare_greedy).stage_names(), (std::vector<std::string>{"argmax"}));
}

// The OpenAI penalties act after the temperature: T = 0.5 doubles the logits 2, 1, 0 to 4, 2, 0; token 0 was
// generated twice (frequency 1.5 → −3, presence 0.5 → −0.5) so it ends at 0.5, below token 1's 2. Prompt tokens
// (id 1, twice) are not counted. Then a −100 bias bans token 1 and +0.25 lifts token 2 to 0.25: the argmax is 0.
TEST(SamplerChainTest, OpenAiPenaltiesAndLogitBiasFollowTheTemperature) {
  const SamplingParams params{.temperature = 0.5f,
                              .top_k = 0,
                              .top_p = 1.0f,
                              .frequency_penalty = 1.5f,
                              .presence_penalty = 0.5f,
                              .greedy = true};
  std::vector<float> logits = {2.0f, 1.0f, 0.0f};
  const std::vector<int> history = {1, 1, 0, 0};  // prompt {1, 1}, generated {0, 0}
  SamplerChain(params).filter(logits, {.history = history, .step = 2});
  EXPECT_EQ(logits, (std::vector<float>{0.5f, 2.0f, 0.0f}));
  SamplingParams banned = params;
  banned.logit_bias = {{1, -100.0f}, {2, 0.25f}};
  std::vector<float> again = {2.0f, 1.0f, 0.0f};
  const SampledToken chosen = SamplerChain(banned).sample(again, {.history = history, .step = 2});
  EXPECT_EQ(again[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(again[2], 0.25f);
  EXPECT_EQ(chosen.token, 0);
  EXPECT_EQ(chosen.kept_count, 2);
}

TEST(SamplerChainTest, TemperatureComesBeforeTopP) {
  // Logits 2, 1, 0. At T = 1: probabilities 0.665, 0.245, 0.090; cumulative 0.665 ≤ 0.7, 0.910 > 0.7 → keep 2.
  // At T = 0.5 the logits become 4, 2, 0: probabilities 0.867, 0.117, 0.016; 0.867 > 0.7 already → keep 1.
  // If temperature came after top-p (llama.cpp's order) both would keep 2.
  const std::vector<float> logits = {2.0f, 1.0f, 0.0f};
  const SamplingParams warm{.temperature = 1.0f, .top_k = 0, .top_p = 0.7f};
  const SamplingParams cold{.temperature = 0.5f, .top_k = 0, .top_p = 0.7f};
  EXPECT_EQ(SamplerChain(warm).kept_mask(logits, {}), (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(SamplerChain(cold).kept_mask(logits, {}), (std::vector<uint8_t>{1, 0, 0}));
}

TEST(SamplerChainTest, RepetitionPenaltyComesBeforeTopK) {
  // Logits 3, 2.9, 1 with id 0 already seen and r = 2: 3 → 1.5, so id 1 (2.9) is now the largest and top-k = 1
  // keeps it. Top-k first would have kept id 0 alone and then penalised it to 1.5, still picking id 0.
  const std::vector<int> history = {0, 0};
  const SamplingParams params{
      .temperature = 1.0f, .top_k = 1, .top_p = 1.0f, .repetition_penalty = 2.0f, .greedy = true};
  SamplerChain chain(params);
  std::vector<float> logits = {3.0f, 2.9f, 1.0f};
  const SampledToken sampled = chain.sample(logits, {.history = history});
  EXPECT_EQ(sampled.token, 1);
  EXPECT_EQ(sampled.kept_count, 1);
  EXPECT_EQ(logits, (std::vector<float>{kMinusInfinity, 2.9f, kMinusInfinity}));
}

TEST(SamplerChainTest, KeptMaskAfterTopKTopPAndMinP) {
  // Weights 8, 4, 2, 1, 1, 0.5 (logits are their logs), T = 1.
  //   top-k 5: the 5th largest is ln 1, tied at ids 3 and 4 → both stay, id 5 goes.
  //   top-p 0.8 over 8, 4, 2, 1, 1 (sum 16): cumulative 0.5, 0.75, 0.875 > 0.8 → keep ids 0, 1, 2.
  //   min-p 0.3 over 8, 4, 2 (sum 14): threshold 0.3 · 8/14 = 2.4/14 > 2/14 → id 2 goes.
  const std::vector<float> logits = {std::log(8.0f), std::log(4.0f), std::log(2.0f), 0.0f, 0.0f, std::log(0.5f)};
  const SamplingParams top_k_only{.temperature = 1.0f, .top_k = 5, .top_p = 1.0f};
  const SamplingParams top_k_top_p{.temperature = 1.0f, .top_k = 5, .top_p = 0.8f};
  const SamplingParams all_three{.temperature = 1.0f, .top_k = 5, .top_p = 0.8f, .min_p = 0.3f};
  EXPECT_EQ(SamplerChain(top_k_only).kept_mask(logits, {}), (std::vector<uint8_t>{1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(SamplerChain(top_k_top_p).kept_mask(logits, {}), (std::vector<uint8_t>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(SamplerChain(all_three).kept_mask(logits, {}), (std::vector<uint8_t>{1, 1, 0, 0, 0, 0}));
}

TEST(SamplerChainTest, GreedyTakesTheFirstOfTiedMaxima) {
  const SamplingParams params{.greedy = true};  // default filters and T = 0.85 still run, as in MiniMind
  SamplerChain chain(params);
  std::vector<float> logits = {1.0f, 4.0f, 2.0f, 4.0f};
  const SampledToken result = chain.sample(logits, {});
  EXPECT_EQ(result.token, 1);
  // top-k 50 keeps all four; after T = 0.85 the tied maxima have probability ≈ 0.471 each, so the cumulative passes
  // 0.85 at the second → the two tied maxima remain.
  EXPECT_EQ(result.kept_count, 2);
}

TEST(SamplerChainTest, DrawUsesTheCounterRng) {
  const SamplingParams params{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 1234};
  const SamplerChain chain(params);
  const std::vector<float> logits = {0.0f, 0.0f, std::log(2.0f)};
  for (uint64_t step = 0; step < 20; ++step) {
    std::vector<float> row = logits;
    const SamplingContext context{.row = 3, .step = step};
    EXPECT_EQ(chain.sample(row, context).token, draw_from_softmax(logits, uniform_for(1234, 3, step)));
  }
}

TEST(SamplerChainTest, DrawFrequenciesFollowTheProbabilities) {
  // Probabilities 0.25, 0.25, 0.5 over 20,000 steps: each frequency within 0.02 of its probability.
  const SamplerChain chain(SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 5});
  const std::vector<float> logits = {0.0f, 0.0f, std::log(2.0f)};
  std::vector<int> counts(3, 0);
  constexpr int kSteps = 20000;
  for (uint64_t step = 0; step < kSteps; ++step) {
    std::vector<float> row = logits;
    ++counts[chain.sample(row, {.step = step}).token];
  }
  EXPECT_NEAR(counts[0] / static_cast<double>(kSteps), 0.25, 0.02);
  EXPECT_NEAR(counts[1] / static_cast<double>(kSteps), 0.25, 0.02);
  EXPECT_NEAR(counts[2] / static_cast<double>(kSteps), 0.5, 0.02);
}

TEST(SamplerChainTest, OneSurvivorIsAlwaysSampled) {
  const SamplerChain chain(SamplingParams{.seed = 77});
  for (uint64_t step = 0; step < 10; ++step) {
    std::vector<float> row = {kMinusInfinity, kMinusInfinity, 0.5f, kMinusInfinity};
    const SampledToken result = chain.sample(row, {.step = step});
    EXPECT_EQ(result.token, 2);
    EXPECT_EQ(result.kept_count, 1);
  }
}

TEST(SamplerChainTest, RejectsBadParamsAndBadRows) {
  EXPECT_THROW(SamplerChain(SamplingParams{.top_p = 1.5f}), Error);
  EXPECT_THROW(SamplerChain(SamplingParams{.temperature = -1.0f}), Error);
  // Temperature 0 is greedy decoding: the chain ends in the argmax and divides by nothing.
  const SamplerChain zero(SamplingParams{.temperature = 0.0f, .top_k = 0, .top_p = 1.0f});
  EXPECT_EQ(zero.stage_names(), (std::vector<std::string>{"argmax"}));
  std::vector<float> three = {0.5f, 2.0f, 1.0f};
  EXPECT_EQ(zero.sample(three, {}).token, 1);
  SamplerChain chain(SamplingParams{});
  std::vector<float> with_nan = {0.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(chain.sample(with_nan, {}), Error);
  std::vector<float> empty;
  EXPECT_THROW(chain.sample(empty, {}), Error);
  const std::vector<int> out_of_range = {5};
  SamplerChain penalised(SamplingParams{.repetition_penalty = 1.2f});
  std::vector<float> logits = {0.0f, 1.0f};
  EXPECT_THROW(penalised.sample(logits, {.history = out_of_range}), Error);
}

}  // namespace
}  // namespace minigen
