#include "sampling/probabilities.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

TEST(SoftmaxProbabilitiesTest, MatchesTheFormula) {
  // exp(0) : exp(ln 3) : exp(ln 6) = 1 : 3 : 6 → 0.1, 0.3, 0.6.
  const std::vector<float> logits = {0.0f, std::log(3.0f), std::log(6.0f)};
  const std::vector<float> probabilities = softmax_probabilities(logits);
  ASSERT_EQ(probabilities.size(), 3u);
  EXPECT_NEAR(probabilities[0], 0.1f, 1e-7);
  EXPECT_NEAR(probabilities[1], 0.3f, 1e-7);
  EXPECT_NEAR(probabilities[2], 0.6f, 1e-7);
}

TEST(SoftmaxProbabilitiesTest, LargeLogitsDoNotOverflow) {
  // exp(1000) overflows a float; after subtracting the max the two tokens are exp(0) and exp(−1).
  const std::vector<float> probabilities = softmax_probabilities(std::vector<float>{1000.0f, 999.0f});
  EXPECT_NEAR(probabilities[0], 1.0f / (1.0f + std::exp(-1.0f)), 1e-7);  // 0.7310586
  EXPECT_NEAR(probabilities[1], 0.26894142f, 1e-7);
}

TEST(SoftmaxProbabilitiesTest, RemovedTokensGetExactlyZero) {
  const std::vector<float> probabilities =
      softmax_probabilities(std::vector<float>{kMinusInfinity, 2.0f, kMinusInfinity});
  EXPECT_EQ(probabilities[0], 0.0f);
  EXPECT_EQ(probabilities[1], 1.0f);
  EXPECT_EQ(probabilities[2], 0.0f);
}

TEST(SoftmaxProbabilitiesTest, RejectsRowsWithNothingLeft) {
  EXPECT_THROW(softmax_probabilities(std::vector<float>{kMinusInfinity, kMinusInfinity}), Error);
  EXPECT_THROW(softmax_probabilities(std::vector<float>{}), Error);
  EXPECT_THROW(softmax_probabilities(std::vector<float>{std::numeric_limits<float>::infinity(), 0.0f}), Error);
}

TEST(SoftmaxProbabilitiesTest, FillsAReusedBufferLikeAFreshOne) {
  // A buffer left longer and full of stale values by an earlier row: it is resized and every entry rewritten.
  const std::vector<float> logits = {0.0f, kMinusInfinity, std::log(3.0f)};
  std::vector<float> reused(9, 123.0f);
  softmax_probabilities(logits, reused);
  EXPECT_EQ(reused, softmax_probabilities(logits));
  EXPECT_EQ(reused[1], 0.0f);
  EXPECT_NEAR(reused[0], 0.25f, 1e-7);
  EXPECT_NEAR(reused[2], 0.75f, 1e-7);
}

}  // namespace
}  // namespace minigen
