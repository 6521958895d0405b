#include "sampling/temperature_sampler.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

TEST(TemperatureSamplerTest, DividesEveryLogit) {
  std::vector<float> logits = {2.0f, -1.0f, 0.0f, kMinusInfinity};
  TemperatureSampler(0.5f).apply(logits, {});
  // 2 / 0.5 = 4, −1 / 0.5 = −2, 0 stays 0, −inf stays −inf.
  EXPECT_EQ(logits, (std::vector<float>{4.0f, -2.0f, 0.0f, kMinusInfinity}));
}

TEST(TemperatureSamplerTest, DividesRatherThanMultipliesByTheReciprocal) {
  // 1 / 0.85f and 1 * (1 / 0.85f) are different floats; MiniMind computes logits / temperature.
  std::vector<float> logits = {1.0f};
  TemperatureSampler(0.85f).apply(logits, {});
  EXPECT_EQ(logits[0], 1.0f / 0.85f);
}

TEST(TemperatureSamplerTest, OneIsANoOp) {
  std::vector<float> logits = {0.3f, -7.25f};
  TemperatureSampler(1.0f).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{0.3f, -7.25f}));
}

TEST(TemperatureSamplerTest, RejectsNonPositiveOrNonFinite) {
  EXPECT_THROW(TemperatureSampler(0.0f), Error);
  EXPECT_THROW(TemperatureSampler(-1.0f), Error);
  EXPECT_THROW(TemperatureSampler(std::numeric_limits<float>::quiet_NaN()), Error);
  EXPECT_THROW(TemperatureSampler(std::numeric_limits<float>::infinity()), Error);
}

TEST(TemperatureSamplerTest, NameShowsTheValue) { EXPECT_EQ(TemperatureSampler(0.85f).name(), "temperature(0.85)"); }

}  // namespace
}  // namespace minigen
