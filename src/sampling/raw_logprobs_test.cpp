// raw_logprobs: log_softmax of the raw row, the numbers an RL trainer divides by.
#include "sampling/raw_logprobs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.h"

namespace minigen {
namespace {

TEST(RawLogprobs, AreTheLogSoftmaxOfTheRowAtTheChosenToken) {
  const std::vector<float> logits = {2.0f, 1.0f, 0.5f, -3.0f};
  const double total = std::exp(2.0) + std::exp(1.0) + std::exp(0.5) + std::exp(-3.0);
  const RawLogprobs out = raw_logprobs(logits, 2, 2);
  EXPECT_NEAR(out.chosen, 0.5 - std::log(total), 1e-6);
  ASSERT_EQ(out.top.size(), 2u);
  EXPECT_EQ(out.top[0].token, 0);
  EXPECT_NEAR(out.top[0].logprob, 2.0 - std::log(total), 1e-6);
  EXPECT_EQ(out.top[1].token, 1);
}

TEST(RawLogprobs, StayFiniteForLargeLogitsAndBreakTiesByTheLowerId) {
  const std::vector<float> logits = {1000.0f, 1000.0f, -1000.0f};
  const RawLogprobs out = raw_logprobs(logits, 1, 3);
  EXPECT_NEAR(out.chosen, -std::log(2.0), 1e-6);
  EXPECT_EQ(out.top[0].token, 0);
  EXPECT_EQ(out.top[1].token, 1);
  EXPECT_LT(out.top[2].logprob, -1000.0f);
  EXPECT_TRUE(raw_logprobs(logits, 0, 0).top.empty());
}

TEST(RawLogprobs, RefuseAnEmptyRowOrATokenOutsideIt) {
  EXPECT_THROW(raw_logprobs(std::vector<float>{}, 0, 1), Error);
  EXPECT_THROW(raw_logprobs(std::vector<float>{1.0f}, 1, 1), Error);
}

}  // namespace
}  // namespace minigen
