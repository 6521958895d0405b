#include "sampling/openai_penalty_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_params.h"

namespace minigen {
namespace {

TEST(OpenAiPenaltySamplerTest, SubtractsCountTimesFrequencyPlusPresenceOncePerGeneratedToken) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f, 4.0f};
  // Prompt {3, 3, 3}, generated {0, 1, 0, 0}: counts 3, 1, 0, 0 over the generated part only.
  const std::vector<int> history = {3, 3, 3, 0, 1, 0, 0};
  OpenAiPenaltySampler(0.5f, 0.25f).apply(logits, {.history = history, .step = 4});
  // 1 − 3 · 0.5 − 0.25 = −0.75; 2 − 0.5 − 0.25 = 1.25; 3 and 4 untouched (token 3 is only in the prompt).
  EXPECT_EQ(logits, (std::vector<float>{-0.75f, 1.25f, 3.0f, 4.0f}));
}

TEST(OpenAiPenaltySamplerTest, NegativePenaltiesFavourRepeatsAndStepZeroChangesNothing) {
  std::vector<float> logits = {1.0f, 2.0f};
  const std::vector<int> history = {1, 0};
  OpenAiPenaltySampler(-1.0f, -0.5f).apply(logits, {.history = history, .step = 1});
  EXPECT_EQ(logits, (std::vector<float>{2.5f, 2.0f}));  // 1 + 1 + 0.5
  std::vector<float> untouched = {1.0f, 2.0f};
  OpenAiPenaltySampler(2.0f, 2.0f).apply(untouched, {.history = history, .step = 0});
  EXPECT_EQ(untouched, (std::vector<float>{1.0f, 2.0f}));
}

TEST(OpenAiPenaltySamplerTest, RejectsOutOfRangeSettingsAndIds) {
  EXPECT_THROW(OpenAiPenaltySampler(2.5f, 0.0f), InvalidSamplingParam);
  EXPECT_THROW(OpenAiPenaltySampler(0.0f, -2.01f), InvalidSamplingParam);
  EXPECT_THROW(OpenAiPenaltySampler(std::nanf(""), 0.0f), InvalidSamplingParam);
  std::vector<float> logits = {1.0f, 2.0f};
  const std::vector<int> bad = {0, 5};
  EXPECT_THROW(OpenAiPenaltySampler(1.0f, 0.0f).apply(logits, {.history = bad, .step = 1}), Error);
  EXPECT_THROW(OpenAiPenaltySampler(1.0f, 0.0f).apply(logits, {.history = bad, .step = 3}), Error);
  try {
    OpenAiPenaltySampler(3.0f, 0.0f);
  } catch (const InvalidSamplingParam& invalid) {
    EXPECT_EQ(invalid.param(), SamplingParam::kFrequencyPenalty);
    EXPECT_STREQ(invalid.what(), "frequency_penalty must be in [-2, 2] (0 turns it off), got 3");
  }
}

}  // namespace
}  // namespace minigen
