// The f16 weight type on an fp16 checkpoint gives the f32 type's logits bit for bit on every path of the forward
// pass — one row prefilled and decoded, 24 rows of different lengths in one call, chunked long-context decode split
// across threads, LoRA rows — from half the matrix bytes; and it is the default for such a checkpoint.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "checkpoint/model_settings.h"
#include "model/lora_test_adapters.h"
#include "model/test_models.h"
#include "model/transformer.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

using testing::test_prompt;

bool same_logits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void round_to_fp16(Matrix& matrix) {
  for (float& value : matrix.values) value = f16_to_float(float_to_f16(value));
  matrix.stored = DType::kF16;
}

// A random model as a MiniMind .pth holds it: every matrix an fp16 (norms too, though they stay fp32 vectors).
std::unique_ptr<Model> fp16_checkpoint(const std::string& family, int context = 512) {
  auto model = testing::random_test_model(family, 1, context);
  ModelWeights& weights = model->weights;
  round_to_fp16(weights.embed_tokens);
  if (!weights.lm_head.empty()) round_to_fp16(weights.lm_head);
  const auto round_feed_forward = [](FeedForwardWeights& ffn) {
    round_to_fp16(ffn.gate);
    round_to_fp16(ffn.up);
    round_to_fp16(ffn.down);
  };
  for (LayerWeights& layer : weights.layers) {
    for (Matrix* matrix : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.router}) {
      if (!matrix->empty()) round_to_fp16(*matrix);
    }
    if (!layer.mlp.gate.empty()) round_feed_forward(layer.mlp);
    for (FeedForwardWeights& expert : layer.experts) round_feed_forward(expert);
    for (FeedForwardWeights& shared : layer.shared_experts) round_feed_forward(shared);
  }
  return model;
}

TEST(F16Weights, IsTheDefaultForAnFp16CheckpointAndOnlyForIt) {
  auto fp16 = fp16_checkpoint("tiny");
  auto fp32 = testing::random_test_model("tiny");
  ModelSettings settings;
  EXPECT_EQ(settings.weight_type(*fp16), WeightType::kF16);
  EXPECT_EQ(settings.weight_type(*fp32), WeightType::kF32);
  fp16->weights.layers.back().mlp.down.stored = DType::kF32;  // one matrix stored wider: f32 keeps it exact
  EXPECT_EQ(settings.weight_type(*fp16), WeightType::kF32);
  settings.weights = "f32";
  EXPECT_EQ(settings.weight_type(*fp16_checkpoint("tiny")), WeightType::kF32);  // asked for: given
}

class F16Family : public ::testing::TestWithParam<std::string> {};

// One prompt prefilled in one call (every position's logits), then decoded token by token, 1 and 2 threads.
TEST_P(F16Family, PrefillAndDecodeGiveTheF32Bits) {
  auto model = fp16_checkpoint(GetParam());
  const ModelConfig& config = model->config;
  const std::vector<int> tokens = test_prompt(30, 4);
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    Transformer f32(*model, pool, WeightType::kF32), f16(*model, pool, WeightType::kF16);
    EXPECT_LT(f16.weight_bytes(), f32.weight_bytes() * 6 / 10);  // the matrices at half; norms stay fp32
    KvCache cache_a(config.kv_layout(), 40), cache_b(config.kv_layout(), 40);
    ForwardRow row_a{&cache_a, std::span(tokens).first(20), true}, row_b{&cache_b, std::span(tokens).first(20), true};
    ASSERT_TRUE(same_logits(f32.forward({&row_a, 1}), f16.forward({&row_b, 1}))) << threads << " threads, prefill";
    for (int i = 20; i < 30; ++i) {
      row_a = ForwardRow{&cache_a, std::span(tokens).subspan(i, 1), false};
      row_b = ForwardRow{&cache_b, std::span(tokens).subspan(i, 1), false};
      ASSERT_TRUE(same_logits(f32.forward({&row_a, 1}), f16.forward({&row_b, 1}))) << threads << " threads, " << i;
    }
  }
}

// MiniMind's rollout shape: 24 rows of different lengths prefilled together, then three decode steps of all 24.
TEST_P(F16Family, TwentyFourRowsOfDifferentLengthsGiveTheF32Bits) {
  auto model = fp16_checkpoint(GetParam());
  const ModelConfig& config = model->config;
  ThreadPool pool(2);
  Transformer f32(*model, pool, WeightType::kF32), f16(*model, pool, WeightType::kF16);
  std::vector<std::unique_ptr<KvCache>> caches_a, caches_b;
  std::vector<std::vector<int>> feeds;
  for (int r = 0; r < 24; ++r) {
    feeds.push_back(test_prompt(1 + (r * 7) % 29, 40 + r));
    caches_a.push_back(std::make_unique<KvCache>(config.kv_layout(), 40));
    caches_b.push_back(std::make_unique<KvCache>(config.kv_layout(), 40));
  }
  for (int step = 0; step < 4; ++step) {
    std::vector<ForwardRow> rows_a, rows_b;
    for (int r = 0; r < 24; ++r) {
      if (step > 0) feeds[r] = {(r * 31 + step) % config.vocab_size};
      rows_a.push_back(ForwardRow{caches_a[r].get(), feeds[r], false});
      rows_b.push_back(ForwardRow{caches_b[r].get(), feeds[r], false});
    }
    ASSERT_TRUE(same_logits(f32.forward(rows_a), f16.forward(rows_b))) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, F16Family, ::testing::Values("tiny", "minimind3", "minimind3-moe"),
                         testing::FamilyTestName());

// Rows with two LoRA adapters and one without, batched: the adapters' own products stay f32 in both.
TEST(F16Weights, LoraRowsGiveTheF32Bits) {
  auto model = fp16_checkpoint("tiny");
  const ModelConfig& config = model->config;
  const LoraAdapter a = testing::random_lora(config, testing::adaptable_modules(config, true), 8, 21, 0.2f);
  const LoraAdapter b = testing::random_lora(config, testing::adaptable_modules(config), 4, 22, 0.2f, 2.0f);
  const std::vector<const LoraAdapter*> adapters = {&a, &b, nullptr};
  ThreadPool pool(2);
  Transformer f32(*model, pool, WeightType::kF32), f16(*model, pool, WeightType::kF16);
  std::vector<std::vector<int>> prompts = {test_prompt(7, 1), test_prompt(11, 2), test_prompt(5, 3)};
  std::vector<std::unique_ptr<KvCache>> caches_a, caches_b;
  std::vector<ForwardRow> rows_a, rows_b;
  for (int r = 0; r < 3; ++r) {
    caches_a.push_back(std::make_unique<KvCache>(config.kv_layout(), 16));
    caches_b.push_back(std::make_unique<KvCache>(config.kv_layout(), 16));
    rows_a.push_back(ForwardRow{caches_a[r].get(), prompts[r], true, adapters[r]});
    rows_b.push_back(ForwardRow{caches_b[r].get(), prompts[r], true, adapters[r]});
  }
  ASSERT_TRUE(same_logits(f32.forward(rows_a), f16.forward(rows_b)));
}

// A 2,080-token context is attended in chunks and its decode split across threads: still the f32 bits.
TEST(F16Weights, LongContextSplitDecodeGivesTheF32Bits) {
  auto model = fp16_checkpoint("tiny", 2112);
  const std::vector<int> tokens = test_prompt(2090, 13);
  ThreadPool pool(2);
  Transformer f32(*model, pool, WeightType::kF32), f16(*model, pool, WeightType::kF16);
  KvCache cache_a(model->config.kv_layout(), 2112), cache_b(model->config.kv_layout(), 2112);
  ForwardRow row_a{&cache_a, std::span(tokens).first(2080), false},
      row_b{&cache_b, std::span(tokens).first(2080), false};
  ASSERT_TRUE(same_logits(f32.forward({&row_a, 1}), f16.forward({&row_b, 1})));
  for (int i = 2080; i < 2090; ++i) {
    row_a = ForwardRow{&cache_a, std::span(tokens).subspan(i, 1), false};
    row_b = ForwardRow{&cache_b, std::span(tokens).subspan(i, 1), false};
    ASSERT_TRUE(same_logits(f32.forward({&row_a, 1}), f16.forward({&row_b, 1}))) << "position " << i;
  }
}

}  // namespace
}  // namespace minigen
