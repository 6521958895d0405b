#include "lab/kv_budget.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace minigen::lab {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(LabKvBudget, TinyModelSequencesOfAThousandTokensInOneGiB) {
  // 2,048 B per token × 1,000 tokens = 2,048,000 B per sequence; 1,073,741,824 / 2,048,000 = 524.29 → 524.
  EXPECT_EQ(sequences_in_budget(kGiB, 0, 2048, 1000), 524);
}

TEST(LabKvBudget, MiniMind2InTwentyFourGiB) {
  // 24,576 B per token × 4,096 tokens = 96 MiB per sequence: exactly 256 fit in 24 GiB.
  EXPECT_EQ(sequences_in_budget(24 * kGiB, 0, 24576, 4096), 256);
}

TEST(LabKvBudget, WeightsComeOutOfTheBudgetFirst) {
  // The tiny model's fp32 weights: 4,852,224 × 4 = 19,408,896 B; (1 GiB − that) / (2,048 × 256) = 2,010.98 → 2,010.
  EXPECT_EQ(sequences_in_budget(kGiB, 19408896, 2048, 256), 2010);
  EXPECT_EQ(sequences_in_budget(kGiB, 2 * kGiB, 2048, 256), 0);
  EXPECT_THROW(sequences_in_budget(kGiB, 0, 2048, 0), Error);
}

}  // namespace
}  // namespace minigen::lab
