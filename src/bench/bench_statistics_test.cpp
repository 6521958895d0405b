#include "bench/bench_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace minigen::bench {
namespace {

TEST(BenchStatistics, MeanAndSampleStandardDeviationOfKnownValues) {
  // Σ = 40, mean 5; Σ(x − 5)² = 9 + 1 + 1 + 1 + 0 + 0 + 4 + 16 = 32; sample variance 32 / 7.
  const Statistic statistic = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(statistic.mean, 5.0);
  EXPECT_EQ(statistic.stddev, std::sqrt(32.0 / 7.0));
  EXPECT_EQ(statistic.samples.size(), 8u);

  const Statistic quarters = summarize({1.5, 2.5});  // mean 2, Σ(x − 2)² = 0.5, ÷ 1
  EXPECT_EQ(quarters.mean, 2.0);
  EXPECT_EQ(quarters.stddev, std::sqrt(0.5));
}

TEST(BenchStatistics, OneSampleHasNoSpreadAndNoSamplesIsAnError) {
  const Statistic single = summarize({42.0});
  EXPECT_EQ(single.mean, 42.0);
  EXPECT_EQ(single.stddev, 0.0);
  EXPECT_THROW(summarize({}), Error);
}

// 64 tokens in 0.5 s and in 0.25 s: 128 and 256 tokens/s (mean 192), 7.8125 and 3.90625 ms per token.
TEST(BenchStatistics, RatesAndMillisecondsPerUnitOfTimedRuns) {
  const Statistic rate = per_second({0.5, 0.25}, 64);
  EXPECT_EQ(rate.samples, (std::vector<double>{128, 256}));
  EXPECT_EQ(rate.mean, 192.0);
  const Statistic per_token = milliseconds_per({0.5, 0.25}, 64);
  EXPECT_EQ(per_token.samples, (std::vector<double>{7.8125, 3.90625}));
}

TEST(BenchStatistics, ForwardTokenFormulasOfTheModule) {
  EXPECT_EQ(cached_forward_tokens(183, 64), 246);      // P + N − 1
  EXPECT_EQ(uncached_forward_tokens(183, 64), 13728);  // P·N + N(N−1)/2
  EXPECT_EQ(cached_forward_tokens(512, 256), 767);
  EXPECT_EQ(uncached_forward_tokens(512, 256), 163712);
  EXPECT_EQ(uncached_forward_tokens(10, 1), cached_forward_tokens(10, 1));  // one token: the prefill only
}

TEST(BenchStatistics, BandwidthBoundIsBandwidthOverWeightBytes) {
  EXPECT_EQ(bound_tokens_per_second(1e9, 1'000'000), 1000.0);
  EXPECT_NEAR(bound_tokens_per_second(54.1e9, 19'400'000), 2788.66, 0.01);
  EXPECT_THROW(bound_tokens_per_second(1e9, 0), Error);
}

}  // namespace
}  // namespace minigen::bench
