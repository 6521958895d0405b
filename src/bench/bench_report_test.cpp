#include "bench/bench_report.h"

#include <gtest/gtest.h>

namespace minigen::bench {
namespace {

TestResult test_of(std::string name, std::string kind, std::vector<double> tokens_per_second,
                   std::vector<double> time_ms, std::string time_per) {
  TestResult test;
  test.name = std::move(name);
  test.kind = std::move(kind);
  if (!tokens_per_second.empty()) test.tokens_per_second = summarize(std::move(tokens_per_second));
  test.time_ms = summarize(std::move(time_ms));
  test.time_per = std::move(time_per);
  return test;
}

// A report with round numbers, as the runner would fill it for -p 16 -n 8 -b 2 --no-cache.
BenchReport fixed_report() {
  BenchReport report;
  report.system = {"Test CPU 3000", 2, "AVX2", ""};
  report.model = {"models/minigen-tiny-sft", "tiny", 4'852'224, 32768, 6400};
  report.options.prompt_tokens = 16;
  report.options.generate_tokens = 8;
  report.options.batch_sizes = {2};
  report.options.thread_counts = {2};
  report.options.no_cache = true;
  report.options.repetitions = 2;
  ConfigurationResult configuration;
  configuration.weight_type = WeightType::kF32;
  configuration.threads = 2;
  configuration.weight_bytes = 19'400'000;
  configuration.tests.push_back(test_of("pp16", "prompt", {1000, 3000}, {8, 8}, "call"));
  configuration.tests.push_back(test_of("tg8", "generate", {2300, 2320}, {0.4, 0.4}, "token"));
  TestResult batch = test_of("b2 decode", "batch_decode", {4389, 4389}, {0.456, 0.456}, "step");
  batch.batch_size = 2;
  batch.speedup_vs_batch1 = 1.9;
  configuration.tests.push_back(batch);
  configuration.tests.push_back(test_of("ttft", "ttft", {}, {8.5, 8.5}, "call"));
  TestResult uncached = test_of("tg8 no-cache", "generate_no_cache", {100, 100}, {10, 10}, "token");
  uncached.cached_total_ms = summarize({5, 5});
  uncached.uncached_total_ms = summarize({80, 80});
  uncached.forward_tokens_cached = 23;     // 16 + 8 − 1
  uncached.forward_tokens_uncached = 156;  // 16·8 + 8·7/2
  configuration.tests.push_back(uncached);
  configuration.bound = {54.1e9, 19'400'000, true, 54.1e9 / 19.4e6, "tg8", 2310, 2310 / (54.1e9 / 19.4e6)};
  report.configurations.push_back(configuration);
  BandwidthMeasurement measured;
  measured.buffer_bytes = 19'400'000;
  measured.threads = 2;
  measured.runs = 5;
  measured.passes_per_run = 3;
  measured.bytes_per_second = 54.1e9;
  report.bandwidth.push_back(measured);
  return report;
}

TEST(BenchReport, MarkdownTableInTheMannerOfLlamaBench) {
  EXPECT_EQ(render_table(fixed_report()),
            "| model | weights | threads | test | t/s (mean ± sd) | time (mean ± sd) | vs |\n"
            "|---|---|---:|---|---:|---:|---|\n"
            "| tiny 4.85 M | f32 | 2 | pp16 | 2,000.00 ± 1,414.21 | 8.000 ± 0.000 ms |  |\n"
            "| tiny 4.85 M | f32 | 2 | tg8 | 2,310.00 ± 14.14 | 0.400 ± 0.000 ms/token | 83 % of bound |\n"
            "| tiny 4.85 M | f32 | 2 | b2 decode | 4,389.00 ± 0.00 | 0.456 ± 0.000 ms/step | 1.90× b1 |\n"
            "| tiny 4.85 M | f32 | 2 | ttft | — | 8.500 ± 0.000 ms |  |\n"
            "| tiny 4.85 M | f32 | 2 | tg8 no-cache | 100.00 ± 0.00 | 10.000 ± 0.000 ms/token | wall 16.0× cached · "
            "forward tokens 6.8× |\n");
}

// The roofline in the table's last column and in its own lines: pp against the compute peak.
TEST(BenchReport, PrefillAgainstTheComputePeak) {
  BenchReport report = fixed_report();
  ConfigurationResult& configuration = report.configurations[0];
  configuration.peak.instruction = "fp32 FMA, 8 lanes (AVX2)";
  configuration.peak.ops_per_second = 400e9;
  configuration.tests[0].bound = TestBound{"compute", 2.0, 0.25};  // 8 ms measured, 2 ms at the peak
  const std::string text = render_text(report);
  EXPECT_NE(text.find("| pp16 | 2,000.00 ± 1,414.21 | 8.000 ± 0.000 ms | 25 % of compute bound |"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  f32, 2 threads: fp32 FMA, 8 lanes (AVX2) = 400 GOP/s; pp16 100 GOP/s = 25 %\n"),
            std::string::npos)
      << text;
  const nlohmann::json json = report_json(report);
  EXPECT_EQ(json["results"][0]["tests"][0]["bound"],
            (nlohmann::json{{"resource", "compute"}, {"time_ms", 2.0}, {"time_per", "call"}, {"fraction", 0.25}}));
  EXPECT_EQ(json["results"][0]["compute_peak"]["ops_per_second"], 400e9);
}

TEST(BenchReport, TextShowsTheBoundArithmetic) {
  const std::string text = render_text(fixed_report());
  EXPECT_NE(text.find("cpu       Test CPU 3000 · 2 cores · SIMD AVX2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("f32, 2 threads: bound = 54.1 GB/s ÷ 19.4 MB = 2,789 tok/s"), std::string::npos) << text;
  EXPECT_NE(text.find("tg8 2,310 tok/s = 83 % of bound"), std::string::npos) << text;
  EXPECT_NE(text.find("2 threads:  19.4 MB buffer 54.1 GB/s (5 runs)"), std::string::npos) << text;
  EXPECT_NE(text.find("forward tokens P·N + N(N−1)/2 = 156 vs P + N − 1 = 23 = 6.8×"), std::string::npos) << text;
  EXPECT_EQ(text.find("bf16 drift"), std::string::npos);  // only when bf16 was measured
}

// The JSON carries what the report computes, not only what it was given: the sample mean and sd of each test, the
// no-cache wall-time ratio, null where a test has no rate, and every test under its configuration in table order.
TEST(BenchReport, JsonHoldsEveryNumber) {
  const nlohmann::json json = report_json(fixed_report());
  const nlohmann::json& tests = json["results"][0]["tests"];
  ASSERT_EQ(tests.size(), 5u);
  std::vector<std::string> names;
  for (const nlohmann::json& test : tests) names.push_back(test["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"pp16", "tg8", "b2 decode", "ttft", "tg8 no-cache"}));
  EXPECT_EQ(tests[0]["tokens_per_second"]["mean"], 2000.0);                                      // of 1000 and 3000
  EXPECT_NEAR(tests[0]["tokens_per_second"]["stddev"].get<double>(), 1414.2135623730951, 1e-9);  // sample sd
  EXPECT_EQ(tests[1]["tokens_per_second"]["mean"], 2310.0);
  EXPECT_EQ(tests[3]["tokens_per_second"], nullptr);  // ttft has a time, not a rate
  EXPECT_EQ(tests[4]["wall_time_ratio"], 16.0);       // 80 ms without the cache ÷ 5 ms with it
  EXPECT_EQ(json["bf16_drift"], nullptr);             // only when bf16 was measured
  EXPECT_EQ(json["system"]["openblas_coretype"], nullptr);
}

// The LoRA tests as the runner fills them for --lora-rank 16 -n 8: one decode test and the mixed batch.
BenchReport lora_report() {
  BenchReport report = fixed_report();
  ConfigurationResult& configuration = report.configurations[0];
  TestResult decode = test_of("tg8 lora r16", "lora_generate", {2100, 2100}, {0.476, 0.476}, "token");
  LoraComparison& one = decode.lora.emplace();
  one.base_test = "tg8";
  one.base_tokens_per_second = summarize({2300, 2300});
  one.fraction_of_base = 2100.0 / 2300.0;
  one.target_fraction = 0.90;
  one.greedy_tokens = 8;
  one.first_difference = 2;
  one.rows_differing_from_base = 1;
  configuration.tests.push_back(decode);
  TestResult batch = test_of("b32 4 adapters", "lora_batch", {4000, 4000}, {8, 8}, "step");
  batch.batch_size = 32;
  LoraComparison& mixed = batch.lora.emplace();
  mixed.adapters = 4;
  mixed.rows = 32;
  mixed.base_test = "b32 decode";
  mixed.base_tokens_per_second = summarize({5000, 5000});
  mixed.fraction_of_base = 0.8;
  mixed.target_fraction = 0.85;
  mixed.separate_tokens_per_second = summarize({2000, 2000});
  mixed.mixed_over_separate = 2.0;
  mixed.greedy_tokens = 9;
  mixed.rows_differing_from_base = 32;
  configuration.tests.push_back(batch);
  report.lora =
      LoraDescription{"random", "q_proj, o_proj in 8 of 8 layers, rank 16", 4, 16, 393'216, 63'912'192, 0.02f, 0.5f};
  return report;
}

TEST(BenchReport, LoraTestsShowTheirFractionTargetAndSeparateEngines) {
  const BenchReport report = lora_report();
  const std::string table = render_table(report);
  EXPECT_NE(table.find("| tg8 lora r16 | 2,100.00 ± 0.00 | 0.476 ± 0.000 ms/token | 0.91× tg8 without the adapter "
                       "(target ≥ 0.90) |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| b32 4 adapters | 4,000.00 ± 0.00 | 8.000 ± 0.000 ms/step | 0.80× b32 decode without "
                       "adapters (target ≥ 0.85) · 2.00× separate |"),
            std::string::npos)
      << table;
  const std::string text = render_text(report);
  EXPECT_NE(text.find("LoRA adapters: 4 random, MiniMind's shape (A ~ N(0, 0.02²), B ~ N(0, 0.5²), scale 1): q_proj, "
                      "o_proj in 8 of 8 layers, rank 16; 393,216 parameters each (1.57 MB fp32), 0.62 % of the model"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tg8 lora r16 2,100 ÷ tg8 without the adapter 2,300 tok/s = 0.91 (target ≥ 0.90: met); greedy "
                      "tokens differ from the base's from token 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("= 0.80 (target ≥ 0.85: not met); one batch of 8 rows per adapter, one after another: 2,000 "
                      "tok/s → mixed = 2.00× separate, tokens identical; 32 of 32 rows"),
            std::string::npos)
      << text;
  const nlohmann::json json = report_json(report);
  const nlohmann::json& tests = json["results"][0]["tests"];
  EXPECT_EQ(tests[5]["lora"]["base_test"], "tg8");
  EXPECT_EQ(tests[5]["lora"]["target_met"], true);
  EXPECT_EQ(tests[5]["lora"]["first_difference"], 2);
  EXPECT_EQ(tests[6]["lora"]["target_met"], false);
  EXPECT_EQ(tests[6]["lora"]["mixed_over_separate"], 2.0);
  EXPECT_EQ(tests[6]["lora"]["separate_tokens_per_second"]["mean"], 2000.0);
  EXPECT_EQ(json["lora"]["parameters_per_adapter"], 393216);
  EXPECT_EQ(json["lora"]["fp32_bytes_per_adapter"], 1572864);
  EXPECT_EQ(report_json(fixed_report())["lora"], nullptr);  // only with --lora-rank or --lora
}

TEST(BenchReport, NumberFormats) {
  EXPECT_EQ(decimal_bytes(512), "512 B");
  EXPECT_EQ(decimal_bytes(19'398'656), "19.4 MB");
  EXPECT_EQ(decimal_bytes(1 << 30), "1.07 GB");
  EXPECT_EQ(mean_plus_minus(summarize({12345.675, 12345.675}), 1), "12,345.7 ± 0.0");
}

}  // namespace
}  // namespace minigen::bench
