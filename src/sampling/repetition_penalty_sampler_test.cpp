#include "sampling/repetition_penalty_sampler.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

TEST(RepetitionPenaltySamplerTest, DividesPositiveAndMultipliesNegativeLogits) {
  std::vector<float> logits = {3.0f, -1.5f, 0.0f, 5.0f, kMinusInfinity};
  const std::vector<int> history = {0, 1, 2, 4};
  RepetitionPenaltySampler(2.0f).apply(logits, {.history = history});
  // id 0: 3 > 0 → 3 / 2 = 1.5; id 1: −1.5 · 2 = −3; id 2: 0 · 2 = 0; id 3 unseen stays 5; id 4: −inf · 2 = −inf.
  EXPECT_EQ(logits, (std::vector<float>{1.5f, -3.0f, 0.0f, 5.0f, kMinusInfinity}));
}

TEST(RepetitionPenaltySamplerTest, RepeatedIdsArePenalisedOnce) {
  std::vector<float> logits = {4.0f, -2.0f, 1.0f};
  const std::vector<int> history = {0, 0, 0, 1, 1, 0};
  RepetitionPenaltySampler(2.0f).apply(logits, {.history = history});
  // Once: 4 / 2 = 2 (not 4 / 2⁴ = 0.25), −2 · 2 = −4 (not −8); id 2 unseen.
  EXPECT_EQ(logits, (std::vector<float>{2.0f, -4.0f, 1.0f}));
}

TEST(RepetitionPenaltySamplerTest, PenaltyBelowOneFavoursSeenTokens) {
  std::vector<float> logits = {1.0f, -1.0f};
  const std::vector<int> history = {0, 1};
  RepetitionPenaltySampler(0.5f).apply(logits, {.history = history});
  // 1 / 0.5 = 2, −1 · 0.5 = −0.5.
  EXPECT_EQ(logits, (std::vector<float>{2.0f, -0.5f}));
}

TEST(RepetitionPenaltySamplerTest, OneIsANoOpAndEmptyHistoryChangesNothing) {
  std::vector<float> logits = {1.25f, -3.0f};
  const std::vector<int> history = {0, 1};
  RepetitionPenaltySampler(1.0f).apply(logits, {.history = history});
  EXPECT_EQ(logits, (std::vector<float>{1.25f, -3.0f}));
  RepetitionPenaltySampler(1.3f).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{1.25f, -3.0f}));
}

TEST(RepetitionPenaltySamplerTest, RejectsBadPenaltiesAndIdsOutsideTheVocabulary) {
  EXPECT_THROW(RepetitionPenaltySampler(0.0f), Error);
  EXPECT_THROW(RepetitionPenaltySampler(-1.1f), Error);
  EXPECT_THROW(RepetitionPenaltySampler(std::numeric_limits<float>::quiet_NaN()), Error);
  std::vector<float> logits = {1.0f, 2.0f};
  const std::vector<int> too_large = {2};
  const std::vector<int> negative = {-1};
  EXPECT_THROW(RepetitionPenaltySampler(1.1f).apply(logits, {.history = too_large}), Error);
  EXPECT_THROW(RepetitionPenaltySampler(1.1f).apply(logits, {.history = negative}), Error);
}

}  // namespace
}  // namespace minigen
