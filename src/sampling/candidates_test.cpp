#include "sampling/candidates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace minigen {
namespace {

constexpr float kRemoved = -std::numeric_limits<float>::infinity();

// A row the chain filtered: token 2 removed, the rest in the proportions 0.5 : 0.3 : 0.2.
TEST(DescribeDraw, ReportsTheFilteredDistributionMostLikelyFirst) {
  const std::vector<float> filtered = {std::log(0.5f), std::log(0.3f), kRemoved, std::log(0.2f)};
  const DrawDistribution drawn = describe_draw(filtered, 1, 3);
  EXPECT_FLOAT_EQ(drawn.chosen_probability, 0.3f);
  ASSERT_EQ(drawn.top.size(), 3u);
  EXPECT_EQ(drawn.top[0].token, 0);
  EXPECT_FLOAT_EQ(drawn.top[0].probability, 0.5f);
  EXPECT_EQ(drawn.top[1].token, 1);
  EXPECT_EQ(drawn.top[2].token, 3);
  EXPECT_FLOAT_EQ(drawn.top[2].probability, 0.2f);
}

// Never more than the kept tokens, whatever is asked; equal probabilities are listed by id.
TEST(DescribeDraw, ShowsOnlyKeptTokensAndBreaksTiesById) {
  const std::vector<float> filtered = {kRemoved, 1.0f, kRemoved, 1.0f};
  const DrawDistribution drawn = describe_draw(filtered, 3, 20);
  EXPECT_FLOAT_EQ(drawn.chosen_probability, 0.5f);
  ASSERT_EQ(drawn.top.size(), 2u);
  EXPECT_EQ(drawn.top[0].token, 1);
  EXPECT_EQ(drawn.top[1].token, 3);
  EXPECT_TRUE(describe_draw(filtered, 1, 0).top.empty());
}

// Ids asked for by name get their probability from the same softmax, in the order asked, 0 for a removed one.
TEST(DescribeDraw, ReportsTheProbabilityOfNamedTokensRemovedOnesAsZero) {
  const std::vector<float> filtered = {std::log(0.5f), std::log(0.3f), kRemoved, std::log(0.2f)};
  const std::vector<int> named = {3, 2, 0};
  const DrawDistribution drawn = describe_draw(filtered, 0, 1, named);
  ASSERT_EQ(drawn.of_tokens.size(), 3u);
  EXPECT_FLOAT_EQ(drawn.of_tokens[0], 0.2f);
  EXPECT_EQ(drawn.of_tokens[1], 0.0f);
  EXPECT_FLOAT_EQ(drawn.of_tokens[2], 0.5f);
  EXPECT_TRUE(describe_draw(filtered, 0, 1).of_tokens.empty());
}

}  // namespace
}  // namespace minigen
