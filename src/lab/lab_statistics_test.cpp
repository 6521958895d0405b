#include "lab/lab_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace minigen::lab {
namespace {

TEST(LabStatistics, EntropyOfFourEqualTokensIsTwoBits) {
  const std::vector<float> logits = {0.5f, 0.5f, 0.5f, 0.5f};
  EXPECT_DOUBLE_EQ(entropy_bits(logits, 1.0), 2.0);
  EXPECT_DOUBLE_EQ(entropy_bits(logits, 0.3), 2.0);  // a uniform distribution stays uniform at any temperature
}

TEST(LabStatistics, EntropyOfHalfQuarterQuarterIsOneAndAHalfBits) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.25f), std::log(0.25f)};
  EXPECT_NEAR(entropy_bits(logits, 1.0), 1.5, 1e-7);
  EXPECT_NEAR(top_probability(logits, 1.0), 0.5, 1e-7);
  // T = 0.5 squares the probabilities before renormalising: 1/4, 1/16, 1/16 → 2/3, 1/6, 1/6.
  EXPECT_NEAR(top_probability(logits, 0.5), 2.0 / 3.0, 1e-7);
}

// P = (1/2, 1/2), Q = (1/4, 3/4): KL = ½ ln(½ ÷ ¼) + ½ ln(½ ÷ ¾) = ½ ln 2 + ½ ln ⅔.
TEST(LabStatistics, KlDivergenceOfTwoCoins) {
  const std::vector<float> p = {0.0f, 0.0f};
  const std::vector<float> q = {std::log(0.25f), std::log(0.75f)};
  EXPECT_NEAR(kl_divergence_nats(p, q), 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0), 1e-7);
  EXPECT_EQ(kl_divergence_nats(q, q), 0.0);
  const std::vector<float> shifted = {std::log(0.25f) + 7.0f, std::log(0.75f) + 7.0f};  // same softmax
  EXPECT_NEAR(kl_divergence_nats(q, shifted), 0.0, 1e-12);
  EXPECT_THROW(kl_divergence_nats(p, std::vector<float>{1.0f}), Error);
}

TEST(LabStatistics, EntropyRejectsANonPositiveTemperature) {
  const std::vector<float> logits = {1.0f, 2.0f};
  EXPECT_THROW(entropy_bits(logits, 0.0), Error);
}

TEST(LabStatistics, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_THROW(median({}), Error);
}

TEST(LabStatistics, DistinctCountsWholeSequences) {
  const std::vector<std::vector<int>> sequences = {{1, 2}, {1, 2}, {1, 2, 3}, {2}};
  EXPECT_EQ(distinct_count(sequences), 3);
}

TEST(LabStatistics, PowerOfTwoHistogramBins) {
  const std::vector<int> values = {1, 2, 3, 4, 5, 50};
  const std::vector<CountBin> bins = power_of_two_histogram(values, 64);
  ASSERT_EQ(bins.size(), 7u);
  EXPECT_EQ(bins[2].label, "3–4");
  EXPECT_EQ(bins[6].label, "33–64");
  const std::vector<int> expected = {1, 1, 2, 1, 0, 0, 1};
  for (std::size_t i = 0; i < bins.size(); ++i) EXPECT_EQ(bins[i].count, expected[i]) << bins[i].label;
}

TEST(LabStatistics, CompareRowsFindsTheFirstDifferenceAndBitEquality) {
  GeneratedSequence a;
  a.token_ids = {5, 6, 7};
  a.step_logits = {{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}};
  GeneratedSequence b = a;
  RowComparison same = compare_rows(a, b);
  EXPECT_TRUE(same.token_ids_identical);
  EXPECT_TRUE(same.logits_bit_identical);
  EXPECT_EQ(same.max_abs_logit_difference, 0.0);
  EXPECT_EQ(same.logits_compared, 6);
  EXPECT_EQ(same.first_differing_step, -1);

  b.token_ids[1] = 9;
  b.step_logits[1][0] = 3.5f;
  const RowComparison different = compare_rows(a, b);
  EXPECT_FALSE(different.token_ids_identical);
  EXPECT_FALSE(different.logits_bit_identical);
  EXPECT_EQ(different.first_differing_step, 1);
  EXPECT_EQ(different.max_abs_logit_difference, 0.5);
}

}  // namespace
}  // namespace minigen::lab
