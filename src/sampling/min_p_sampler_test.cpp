#include "sampling/min_p_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

TEST(MinPSamplerTest, KeepsTokensAtLeastMinPTimesTheTop) {
  // Logits ln 8, ln 4, ln 2, ln 1 → probabilities 8/15, 4/15, 2/15, 1/15.
  // min_p = 0.2: threshold 0.2 · 8/15 = 1.6/15 → 8, 4 and 2 (2/15 ≥ 1.6/15) stay, 1/15 goes.
  std::vector<float> logits = {std::log(8.0f), std::log(4.0f), std::log(2.0f), 0.0f};
  MinPSampler(0.2f).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{std::log(8.0f), std::log(4.0f), std::log(2.0f), kMinusInfinity}));
}

TEST(MinPSamplerTest, HigherMinPKeepsFewer) {
  // Same row, min_p = 0.6: threshold 4.8/15 → only 8/15 stays.
  std::vector<float> logits = {std::log(8.0f), std::log(4.0f), std::log(2.0f), 0.0f};
  MinPSampler(0.6f).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{std::log(8.0f), kMinusInfinity, kMinusInfinity, kMinusInfinity}));
}

TEST(MinPSamplerTest, OneKeepsOnlyTiesWithTheTop) {
  std::vector<float> logits = {2.0f, 1.0f, 2.0f};
  MinPSampler(1.0f).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{2.0f, kMinusInfinity, 2.0f}));
}

TEST(MinPSamplerTest, ZeroIsANoOp) {
  const std::vector<float> original = {0.0f, -30.0f, 5.0f, kMinusInfinity};
  std::vector<float> logits = original;
  MinPSampler(0.0f).apply(logits, {});
  EXPECT_EQ(logits, original);
}

TEST(MinPSamplerTest, RejectsValuesOutsideZeroOne) {
  EXPECT_THROW(MinPSampler(-0.1f), Error);
  EXPECT_THROW(MinPSampler(1.01f), Error);
  EXPECT_THROW(MinPSampler(std::numeric_limits<float>::quiet_NaN()), Error);
  EXPECT_EQ(MinPSampler(0.05f).name(), "min-p(0.05)");
}

}  // namespace
}  // namespace minigen
