#include "bench/compute_peak.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bench/roofline.h"
#include "model/test_models.h"
#include "ops/matmul_quantized_vnni.h"

namespace minigen::bench {
namespace {

// A dense model's matrix products are its parameters minus the embedding and the norms: each weight is one
// multiply-add per token.
TEST(ComputePeak, LayerMacsAreTheMatrixParametersOfADenseModel) {
  for (const char* family : {"tiny", "minimind3", "minimind2"}) {
    const ModelConfig config = testing::test_config(family);
    ASSERT_FALSE(config.use_moe);
    const double norms = config.hidden_size * (2.0 * config.num_layers + 1) +
                         (config.qk_norm ? 2.0 * config.head_dim * config.num_layers : 0.0);
    const double embedding = static_cast<double>(config.vocab_size) * config.hidden_size;
    EXPECT_EQ(layer_macs_per_token(config), static_cast<double>(config.parameter_count()) - embedding - norms)
        << family;
  }
}

TEST(ComputePeak, AMixtureOfExpertsCountsOnlyTheExpertsATokenRuns) {
  const ModelConfig config = testing::test_config("minimind3-moe");
  ASSERT_TRUE(config.use_moe);
  const double hidden = config.hidden_size;
  const double attention = 2 * hidden * config.q_width() + 2 * hidden * config.kv_width();
  const double expert = 3 * hidden * config.moe_intermediate_size;
  const double router = hidden * config.num_experts;
  EXPECT_EQ(
      layer_macs_per_token(config),
      config.num_layers * (attention + router + expert * (config.num_experts_per_token + config.num_shared_experts)));
}

// Prefill ops, by hand for 3 tokens: layers for each, 1 + 2 + 3 keys of attention, one output row.
TEST(ComputePeak, PrefillOpsCountTheCausalTriangleAndOneOutputRow) {
  const ModelConfig config = testing::test_config("tiny");
  const double per_key = 2.0 * config.num_layers * config.num_q_heads * config.head_dim;
  EXPECT_EQ(attention_macs(config, 4), 5 * per_key);
  const double expected = 2 * (3 * layer_macs_per_token(config) + 6 * per_key +
                               static_cast<double>(config.hidden_size) * config.vocab_size);
  EXPECT_EQ(prefill_ops(config, 3), expected);
}

TEST(ComputePeak, EveryWeightTypeHasAMeasuredPeakWithAFiniteChecksum) {
  ThreadPool pool(2);
  for (WeightType type : {WeightType::kF32, WeightType::kBF16, WeightType::kQ8, WeightType::kQ4}) {
    const ComputePeak peak = measure_compute_peak(type, default_activation_codes(type), pool, 1);
    EXPECT_EQ(peak.threads, 2);
    EXPECT_FALSE(peak.instruction.empty());
    EXPECT_TRUE(std::isfinite(peak.checksum)) << peak.instruction;
    // Every machine minigen runs on has AVX2 at least; a scalar-only build reports no peak rather than a wrong one.
    if (peak.instruction.find("scalar") == std::string::npos) {
      EXPECT_GT(peak.ops_per_second, 1e9) << peak.instruction;  // far below any SIMD core, far above nothing
    } else {
      EXPECT_EQ(peak.ops_per_second, 0) << peak.instruction;
    }
  }
}

// q8 × int8 activations is measured on the instruction its kernel runs: vpdpbusd where the AVX-512 VNNI kernel runs
// it, the int16 pairs of the default everywhere else.
TEST(ComputePeak, W8A8IsMeasuredOnTheByteInstructionWhereTheVnniKernelRunsIt) {
  ThreadPool pool(1);
  const ComputePeak w8a8 = measure_compute_peak(WeightType::kQ8, ActivationCodes::kInt8, pool, 1);
  const ComputePeak w8a16 = measure_compute_peak(WeightType::kQ8, ActivationCodes::kInt16, pool, 1);
  if (avx512_vnni_kernel_enabled()) {
    EXPECT_EQ(w8a8.instruction, "vpdpbusd int8 quads, 512-bit (AVX-512 VNNI)");
    EXPECT_EQ(w8a16.instruction, "vpdpwssd int16 pairs, 512-bit (AVX-512 VNNI)");
  } else {
    EXPECT_EQ(w8a8.instruction, w8a16.instruction);
  }
}

// The roofline's arithmetic on made-up numbers: bytes bound for tg, compute bound for pp, the larger for a batch.
TEST(Roofline, EachTestGetsTheBoundOfTheResourceItRunsInto) {
  const ModelConfig config = testing::test_config("tiny");
  BenchOptions options;
  options.prompt_tokens = 64;
  options.generate_tokens = 8;
  options.batch_prompt_tokens = 16;
  ConfigurationResult configuration;
  configuration.weight_bytes = 10'000'000;
  auto test = [](const char* kind, int rows, double ms) {
    TestResult result;
    result.kind = kind;
    result.batch_size = rows;
    result.time_ms.mean = ms;
    return result;
  };
  configuration.tests = {test("prompt", 1, 4.0), test("generate", 1, 1.0), test("batch_decode", 64, 2.0),
                         test("long_context", 1, 4.0), test("generate_no_cache", 1, 5.0)};
  configuration.tests[3].kv_bytes = 30'000'000;
  const RooflineInputs inputs{
      .weight_bytes_per_second = 20e9, .dram_bytes_per_second = 10e9, .peak_ops_per_second = 1e12};
  assign_bounds(configuration, config, options, inputs);

  const TestBound& prompt = *configuration.tests[0].bound;
  EXPECT_EQ(prompt.resource, "compute");
  EXPECT_DOUBLE_EQ(prompt.time_ms, 1e3 * prefill_ops(config, 64) / 1e12);
  EXPECT_DOUBLE_EQ(prompt.fraction, prompt.time_ms / 4.0);
  const TestBound& generate = *configuration.tests[1].bound;
  EXPECT_EQ(generate.resource, "memory bandwidth");
  EXPECT_DOUBLE_EQ(generate.time_ms, 0.5);  // 10 MB at 20 GB/s
  EXPECT_DOUBLE_EQ(generate.fraction, 0.5);
  // 64 rows: 0.5 ms of bytes, or the step's ops at 1 TOP/s, whichever is more.
  const double position = 16 + 8 / 2.0;
  const double step_ops = 2.0 * 64 *
                          (layer_macs_per_token(config) + attention_macs(config, static_cast<int>(position)) +
                           static_cast<double>(config.hidden_size) * config.vocab_size);
  const TestBound& batch = *configuration.tests[2].bound;
  EXPECT_DOUBLE_EQ(batch.time_ms, std::max(0.5, 1e3 * step_ops / 1e12));
  EXPECT_EQ(batch.resource, 1e3 * step_ops / 1e12 > 0.5 ? "compute" : "memory bandwidth");
  const TestBound& long_context = *configuration.tests[3].bound;
  EXPECT_DOUBLE_EQ(long_context.time_ms, 4.0);  // (10 + 30) MB at 10 GB/s: more than the cache holds, DRAM
  EXPECT_DOUBLE_EQ(long_context.fraction, 1.0);
  // A short context whose cache fits beside the weights streams at the weights' (cache) bandwidth.
  configuration.tests[3].kv_bytes = 2'000'000;
  assign_bounds(configuration, config, options, inputs);
  EXPECT_DOUBLE_EQ(configuration.tests[3].bound->time_ms, 0.6);  // 12 MB at 20 GB/s
  EXPECT_FALSE(configuration.tests[4].bound.has_value());
}

}  // namespace
}  // namespace minigen::bench
