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

BenchOptions lora_options() {
  BenchOptions options;
  options.prompt_tokens = 12;
  options.generate_tokens = 6;
  options.batch_sizes = {1};
  options.thread_counts = {2};
  options.repetitions = 2;
  options.dram_buffer_bytes = 2'000'000;
  options.bandwidth_runs = 1;
  options.lora_rank = 4;
  options.lora_batch_rows = 8;  // 2 rows per adapter
  options.lora_adapters = 4;
  return options;
}

// The LoRA tests on a tiny random model: named as the table shows them, each measured against its base run, and the
// adapters in effect — their greedy tokens differ from the base's — while a row chooses the same tokens in the mixed
// batch as in its adapter's own batch (batch invariance with adapters). No timing is asserted.
TEST(BenchRunner, LoraTestsRunTheAdaptersAgainstTheirBaseRuns) {
  const auto model = testing::random_test_model("tiny");
  ModelDescription description{"random:tiny", "tiny", model->config.parameter_count(), 512, 6400};
  std::ostringstream progress;
  const BenchReport report = run_bench(*model, description, lora_options(), progress);
  ASSERT_EQ(report.configurations.size(), 1u);
  const std::vector<TestResult>& tests = report.configurations[0].tests;
  std::vector<std::string> names;
  for (const TestResult& test : tests) names.push_back(test.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pp12", "tg6", "b1 decode", "ttft", "tg6 lora r4", "b8 4 adapters"}));

  const TestResult& decode = tests[4];
  EXPECT_EQ(decode.kind, "lora_generate");
  ASSERT_TRUE(decode.lora.has_value());
  EXPECT_EQ(decode.lora->base_test, "tg6");
  EXPECT_EQ(decode.lora->base_tokens_per_second.samples.size(), 2u);
  EXPECT_EQ(decode.time_ms.samples.size(), 2u);
  EXPECT_GT(decode.lora->fraction_of_base, 0);
  EXPECT_DOUBLE_EQ(decode.lora->fraction_of_base,
                   decode.tokens_per_second->mean / decode.lora->base_tokens_per_second.mean);
  EXPECT_EQ(decode.lora->target_fraction, 0.90);
  EXPECT_EQ(decode.lora->greedy_tokens, 6);
  EXPECT_GE(decode.lora->first_difference, 0) << "the adapter changed no greedy token: did its term run?";
  EXPECT_EQ(decode.lora->rows_differing_from_base, 1);

  const TestResult& batch = tests[5];
  EXPECT_EQ(batch.kind, "lora_batch");
  EXPECT_EQ(batch.batch_size, 8);
  ASSERT_TRUE(batch.lora.has_value());
  EXPECT_EQ(batch.lora->adapters, 4);
  EXPECT_EQ(batch.lora->rows, 8);
  EXPECT_EQ(batch.lora->base_test, "b8 decode");
  EXPECT_GT(batch.lora->fraction_of_base, 0);
  EXPECT_EQ(batch.lora->target_fraction, 0.85);
  ASSERT_TRUE(batch.lora->separate_tokens_per_second.has_value());
  EXPECT_GT(batch.lora->separate_tokens_per_second->mean, 0);
  EXPECT_DOUBLE_EQ(*batch.lora->mixed_over_separate,
                   batch.tokens_per_second->mean / batch.lora->separate_tokens_per_second->mean);
  EXPECT_TRUE(batch.lora->mixed_equals_separate);
  EXPECT_EQ(batch.lora->greedy_tokens, 7);  // the prefill's token and 6 decoded
  EXPECT_GT(batch.lora->rows_differing_from_base, 0);

  ASSERT_TRUE(report.lora.has_value());
  EXPECT_EQ(report.lora->source, "random");
  EXPECT_EQ(report.lora->count, 4);
  EXPECT_EQ(report.lora->summary, "q_proj, o_proj in 4 of 4 layers, rank 4");
  EXPECT_EQ(report.lora->parameters, 4 * 2 * 4 * (256 + 256));  // layers · matrices · rank · (in + out)
  EXPECT_NE(progress.str().find("b8 4 adapters done"), std::string::npos);
}

// A real adapter file in place of random ones: MiniMind's own tiny adapter (tests/data/lora, written by its
// model_lora.py for the random tiny model of seed 1), and three copies of it.
TEST(BenchRunner, LoraTestsWithAnAdapterFile) {
  const auto model = testing::random_test_model("tiny");
  BenchOptions options = lora_options();
  options.lora_rank = 0;
  options.lora_path = std::string(MINIGEN_TEST_DATA_DIR) + "/lora/tiny_r4.pth";
  std::ostringstream progress;
  const BenchReport report = run_bench(*model, ModelDescription{}, options, progress);
  ASSERT_TRUE(report.lora.has_value());
  EXPECT_EQ(report.lora->source, options.lora_path);
  EXPECT_EQ(report.lora->rank, 4);
  const TestResult& batch = report.configurations[0].tests.back();
  EXPECT_EQ(batch.name, "b8 4 adapters");
  EXPECT_TRUE(batch.lora->mixed_equals_separate);
  EXPECT_GT(batch.lora->rows_differing_from_base, 0);

  options.lora_path = "/nonexistent/adapter.pth";
  std::ostringstream quiet;
  EXPECT_THROW(run_bench(*model, ModelDescription{}, options, quiet), Error);
  EXPECT_TRUE(quiet.str().empty());  // before anything is measured
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
