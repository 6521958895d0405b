#include "bench/bench_runner.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "core/error.h"
#include "model/test_models.h"

namespace minigen::bench {
namespace {

BenchOptions small_options() {
  BenchOptions options;
  options.prompt_tokens = 12;
  options.generate_tokens = 5;
  options.batch_sizes = {1, 3};
  options.thread_counts = {2};
  options.weight_types = {WeightType::kF32, WeightType::kBF16};
  options.no_cache = true;
  options.repetitions = 2;
  options.dram_buffer_bytes = 2'000'000;
  options.bandwidth_runs = 1;
  return options;
}

TEST(BenchRunner, PromptIdsAreDeterministicAndAvoidSpecialTokens) {
  const std::vector<int> prompt = bench_prompt(300, 6400, 0);
  EXPECT_EQ(prompt, bench_prompt(300, 6400, 0));
  EXPECT_NE(prompt, bench_prompt(300, 6400, 1));
  for (int id : prompt) {
    EXPECT_GE(id, kFirstOrdinaryTokenId);
    EXPECT_LT(id, 6400);
  }
  // Spread over the vocabulary: no id repeats within the 300 tokens.
  EXPECT_EQ(std::set<int>(prompt.begin(), prompt.end()).size(), 300u);
}

// Every test of every configuration, in table order, with positive numbers; no timing is asserted.
TEST(BenchRunner, MeasuresEveryTestOfEveryConfiguration) {
  const auto model = testing::random_test_model("tiny");
  ModelDescription description{"random:tiny", "tiny", model->config.parameter_count(), 512, 6400};
  std::ostringstream progress;
  const BenchReport report = run_bench(*model, description, small_options(), progress);
  ASSERT_EQ(report.configurations.size(), 2u);
  for (const ConfigurationResult& configuration : report.configurations) {
    std::vector<std::string> names;
    for (const TestResult& test : configuration.tests) {
      names.push_back(test.name);
      EXPECT_EQ(test.time_ms.samples.size(), 2u) << test.name;
      EXPECT_GT(test.time_ms.mean, 0) << test.name;
      if (test.kind != "ttft") {
        EXPECT_GT(test.tokens_per_second->mean, 0) << test.name;
      }
    }
    EXPECT_EQ(names, (std::vector<std::string>{"pp12", "tg5", "b1 decode", "b3 decode", "ttft", "tg5 no-cache"}));
    EXPECT_TRUE(configuration.tests[3].speedup_vs_batch1.has_value());
    const TestResult& uncached = configuration.tests[5];
    EXPECT_EQ(uncached.forward_tokens_cached, 16);    // 12 + 5 − 1
    EXPECT_EQ(uncached.forward_tokens_uncached, 70);  // 12·5 + 5·4/2
    EXPECT_TRUE(uncached.tokens_identical);           // the cache changes no token
    EXPECT_TRUE(configuration.bound.cache_resident);  // the tiny model's weights are under 24 MB
    EXPECT_GT(configuration.bound.bound_tokens_per_second, 0);
  }
  // bf16 halves the bytes of the packed matrices; the norms stay fp32.
  EXPECT_LT(report.configurations[1].weight_bytes, report.configurations[0].weight_bytes * 6 / 10);
  // The DRAM buffer and one cache-sized buffer per weight type, on the one pool.
  EXPECT_EQ(report.bandwidth.size(), 3u);
  for (const BandwidthMeasurement& measured : report.bandwidth)
    EXPECT_EQ(measured.checksum, measured.expected_checksum);
  ASSERT_TRUE(report.drift.has_value());
  EXPECT_EQ(report.drift->logits_compared, 12 * 6400);
  EXPECT_GT(report.drift->max_abs_logit_difference, 0);  // bf16 rounding moves the logits …
  EXPECT_EQ(report.drift->greedy_tokens, 5);
  EXPECT_NE(progress.str().find("tg5 done"), std::string::npos);
}

TEST(BenchRunner, RejectsAPromptBeyondTheContextBeforeMeasuring) {
  const auto model = testing::random_test_model("tiny");  // 512-token context
  BenchOptions options = small_options();
  options.prompt_tokens = 500;
  options.generate_tokens = 13;
  std::ostringstream progress;
  EXPECT_THROW(run_bench(*model, ModelDescription{}, options, progress), Error);
  EXPECT_TRUE(progress.str().empty());
}

}  // namespace
}  // namespace minigen::bench
