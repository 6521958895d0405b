#include "sampling/counter_rng.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>

namespace minigen {
namespace {

// Values of the construction in counter_rng.h (SplitMix64's mixer over seed, row, step), computed independently with
// Python's integers: a change to the stream — which would change every sampled text — fails here.
TEST(CounterRngTest, MatchesTheDocumentedConstruction) {
  EXPECT_EQ(uniform_for(42, 3, 17), 0x1.588fbff14ae69p-1);  // 0.6729717237516982
  EXPECT_EQ(uniform_for(0, 0, 0), 0x1.b3bfdcba00737p-1);    // 0.851073167519849
  EXPECT_EQ(uniform_for(UINT64_MAX, 0, 0), 0x1.6481dd8961918p-2);
  EXPECT_EQ(uniform_for(7, 1, 99), 0x1.589c3acba54aep-2);
}

TEST(CounterRngTest, SameCoordinatesGiveTheSameNumber) {
  // Asking for other draws in between changes nothing: there is no hidden state.
  const double first = uniform_for(7, 0, 0);
  for (uint64_t step = 0; step < 100; ++step) uniform_for(7, 1, step);
  EXPECT_EQ(uniform_for(7, 0, 0), first);
}

TEST(CounterRngTest, SeedRowAndStepEachChangeTheStream) {
  const double base = uniform_for(1, 2, 3);
  EXPECT_NE(uniform_for(2, 2, 3), base);
  EXPECT_NE(uniform_for(1, 3, 3), base);
  EXPECT_NE(uniform_for(1, 2, 4), base);
  // Swapping row and step must not give the same number either.
  EXPECT_NE(uniform_for(1, 3, 2), base);

  // Streams of neighbouring rows and seeds share no value over 1000 steps.
  std::set<double> seen;
  for (uint64_t seed = 0; seed < 2; ++seed) {
    for (uint64_t row = 0; row < 4; ++row) {
      for (uint64_t step = 0; step < 1000; ++step) seen.insert(uniform_for(seed, row, step));
    }
  }
  EXPECT_EQ(seen.size(), 2u * 4u * 1000u);
}

TEST(CounterRngTest, StaysInsideZeroOne) {
  for (uint64_t step = 0; step < 10000; ++step) {
    const double value = uniform_for(123, 0, step);
    ASSERT_GE(value, 0.0);
    ASSERT_LT(value, 1.0);
  }
}

// Mean and a 10-bucket chi-square over 100,000 draws, once walking steps and once walking rows.
void ExpectRoughlyUniform(bool walk_rows) {
  constexpr int kDraws = 100000;
  constexpr int kBuckets = 10;
  std::array<int, kBuckets> counts{};
  double sum = 0.0;
  for (uint64_t index = 0; index < kDraws; ++index) {
    const double value = walk_rows ? uniform_for(99, index, 5) : uniform_for(99, 5, index);
    sum += value;
    ++counts[static_cast<int>(value * kBuckets)];
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 0.01);
  double chi_square = 0.0;
  const double expected = static_cast<double>(kDraws) / kBuckets;
  for (const int count : counts) chi_square += (count - expected) * (count - expected) / expected;
  // 9 degrees of freedom: the 99.99th percentile is about 33.7, so 40 only fails for a broken generator.
  EXPECT_LT(chi_square, 40.0);
}

TEST(CounterRngTest, RoughlyUniformAlongSteps) { ExpectRoughlyUniform(/*walk_rows=*/false); }
TEST(CounterRngTest, RoughlyUniformAlongRows) { ExpectRoughlyUniform(/*walk_rows=*/true); }

}  // namespace
}  // namespace minigen
