#include "sampling/token_choice.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

TEST(ArgmaxTest, PicksTheLargest) { EXPECT_EQ(argmax(std::vector<float>{0.1f, 2.5f, -3.0f, 2.4f}), 1); }

TEST(ArgmaxTest, FirstOfTiesWins) {
  EXPECT_EQ(argmax(std::vector<float>{1.0f, 7.0f, 3.0f, 7.0f, 7.0f}), 1);
  // Every token removed: all equal (−inf), so the first, as torch.argmax does.
  EXPECT_EQ(argmax(std::vector<float>{kMinusInfinity, kMinusInfinity}), 0);
  EXPECT_THROW(argmax(std::vector<float>{}), Error);
}

TEST(DrawFromSoftmaxTest, UniformPicksTheMatchingInterval) {
  // Logits 0, 0, ln 2 → probabilities 0.25, 0.25, 0.5; intervals [0, 0.25) → 0, [0.25, 0.5) → 1, [0.5, 1) → 2.
  const std::vector<float> logits = {0.0f, 0.0f, std::log(2.0f)};
  EXPECT_EQ(draw_from_softmax(logits, 0.0), 0);
  EXPECT_EQ(draw_from_softmax(logits, 0.1), 0);
  EXPECT_EQ(draw_from_softmax(logits, 0.3), 1);
  EXPECT_EQ(draw_from_softmax(logits, 0.6), 2);
  EXPECT_EQ(draw_from_softmax(logits, 0.999), 2);
}

TEST(DrawFromSoftmaxTest, NeverPicksRemovedTokens) {
  // Probabilities 0, 0.5, 0, 0.5, 0: u = 0 lands on id 1 (not id 0), u just below 1 on id 3 (not id 4).
  const std::vector<float> logits = {kMinusInfinity, 1.0f, kMinusInfinity, 1.0f, kMinusInfinity};
  EXPECT_EQ(draw_from_softmax(logits, 0.0), 1);
  EXPECT_EQ(draw_from_softmax(logits, 0.49), 1);
  EXPECT_EQ(draw_from_softmax(logits, 0.51), 3);
  EXPECT_EQ(draw_from_softmax(logits, std::nextafter(1.0, 0.0)), 3);
}

TEST(DrawFromSoftmaxTest, ASingleSurvivorIsAlwaysDrawn) {
  const std::vector<float> logits = {kMinusInfinity, kMinusInfinity, -5.0f};
  EXPECT_EQ(draw_from_softmax(logits, 0.0), 2);
  EXPECT_EQ(draw_from_softmax(logits, 0.7), 2);
}

TEST(DrawFromSoftmaxTest, RejectsBadInput) {
  const std::vector<float> logits = {0.0f, 1.0f};
  EXPECT_THROW(draw_from_softmax(logits, 1.0), Error);
  EXPECT_THROW(draw_from_softmax(logits, -0.1), Error);
  EXPECT_THROW(draw_from_softmax(logits, std::numeric_limits<double>::quiet_NaN()), Error);
  EXPECT_THROW(draw_from_softmax(std::vector<float>{kMinusInfinity}, 0.5), Error);
}

TEST(DrawFromSoftmaxTest, UnderflowedTokensAreNeverDrawn) {
  // exp(−200) underflows to 0 in float: id 1 has probability exactly 0, like the removed id 2, so u = 0.5 lands on
  // id 3 (the second half) and nothing ever lands on ids 1 or 2.
  const std::vector<float> logits = {0.0f, -200.0f, kMinusInfinity, 0.0f};
  EXPECT_EQ(draw_from_softmax(logits, 0.0), 0);
  EXPECT_EQ(draw_from_softmax(logits, 0.5), 3);
  EXPECT_EQ(draw_from_softmax(logits, std::nextafter(1.0, 0.0)), 3);
}

}  // namespace
}  // namespace minigen
