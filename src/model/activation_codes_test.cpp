// W8A8 — q8 weights with int8 activation codes (ops/weight_type.h) — at the level of the model: which matrices take
// it, that the forward pass keeps the exactness contract with it (cached decode = the one-call prefill, bit for bit),
// and that it is another model's numbers than q8 × int16, close to f32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "checkpoint/model_settings.h"
#include "model/packed_weights.h"
#include "model/test_models.h"
#include "model/transformer.h"

namespace minigen {
namespace {

bool identical_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

TEST(ActivationCodes, TheLayersTakeThemAndTheOutputProjectionOnlyWhenAsked) {
  auto model = testing::random_test_model("tiny");
  PackedWeights packed = pack_weights(model->config, model->weights, WeightType::kQ8);
  EXPECT_EQ(packed.activations, ActivationCodes::kInt16);
  use_activations(packed, ActivationCodes::kInt8, /*output_projection=*/false);
  EXPECT_EQ(packed.activations, ActivationCodes::kInt8);
  EXPECT_EQ(packed.layers[0].qkv.activations(), ActivationCodes::kInt8);
  EXPECT_EQ(packed.layers[0].mlp.down.activations(), ActivationCodes::kInt8);
  EXPECT_EQ(packed.lm_head.activations(), ActivationCodes::kInt16);
  use_activations(packed, ActivationCodes::kInt8, /*output_projection=*/true);
  EXPECT_EQ(packed.lm_head.activations(), ActivationCodes::kInt8);

  PackedWeights q4 = pack_weights(model->config, model->weights, WeightType::kQ4);
  EXPECT_EQ(q4.activations, ActivationCodes::kInt8);
  EXPECT_EQ(q4.lm_head.activations(), ActivationCodes::kInt16);  // q4's output projection is q8
  EXPECT_THROW(use_activations(q4, ActivationCodes::kInt16, false), Error);
  PackedWeights f32 = pack_weights(model->config, model->weights, WeightType::kF32);
  EXPECT_THROW(use_activations(f32, ActivationCodes::kInt8, false), Error);
}

// Cache on and off: the tokens fed one at a time on top of the cache give the logits the one-call prefill of the
// whole sequence gives at each position (the no-cache path recomputes exactly that prefix), bit for bit.
TEST(ActivationCodes, W8A8CachedDecodeMatchesTheFullPrefillBitForBit) {
  for (const std::string family : {"tiny", "minimind3", "minimind2"}) {
    SCOPED_TRACE(family);
    auto model = testing::random_test_model(family);
    const int vocab = model->config.vocab_size;
    ThreadPool pool(2);
    Transformer transformer(*model, pool, WeightType::kQ8, ActivationCodes::kInt8);
    ASSERT_EQ(transformer.activations(), ActivationCodes::kInt8);
    const std::vector<int> tokens = testing::test_prompt(14, 7);
    KvCache full_cache(model->config.kv_layout(), 16);
    ForwardRow full{&full_cache, tokens, /*all_logits=*/true};
    const std::vector<float> all_logits = transformer.forward(std::span(&full, 1));
    KvCache step_cache(model->config.kv_layout(), 16);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      ForwardRow one{&step_cache, std::span<const int>(tokens).subspan(i, 1), false};
      const std::vector<float>& logits = transformer.forward(std::span(&one, 1));
      ASSERT_TRUE(identical_bits(logits.data(), all_logits.data() + i * vocab, vocab)) << "position " << i;
    }
  }
}

// The flag changes the numbers (it is not q8 × int16 under another name), and they stay close to f32's: on a
// random model, the logits' largest difference from f32 is a small share of their spread, and the greedy token
// agrees at most positions.
TEST(ActivationCodes, W8A8IsAnotherModelCloseToF32) {
  auto model = testing::random_test_model("tiny");
  const int vocab = model->config.vocab_size;
  const std::vector<int> tokens = testing::test_prompt(40, 9);
  ThreadPool pool(2);
  auto logits_of = [&](WeightType type, std::optional<ActivationCodes> codes) {
    Transformer transformer(*model, pool, type, codes);
    KvCache cache(model->config.kv_layout(), 48);
    ForwardRow row{&cache, tokens, true};
    return transformer.forward(std::span(&row, 1));
  };
  const std::vector<float> f32 = logits_of(WeightType::kF32, std::nullopt);
  const std::vector<float> int16 = logits_of(WeightType::kQ8, std::nullopt);
  const std::vector<float> int8 = logits_of(WeightType::kQ8, ActivationCodes::kInt8);
  EXPECT_FALSE(identical_bits(int16.data(), int8.data(), int8.size()));
  double spread = 0, largest_int8 = 0, largest_int16 = 0;
  int same_top1 = 0;
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    const float* f = f32.data() + p * vocab;
    const float* a = int8.data() + p * vocab;
    const float* b = int16.data() + p * vocab;
    int top_f = 0, top_a = 0;
    for (int v = 0; v < vocab; ++v) {
      spread = std::max(spread, static_cast<double>(std::fabs(f[v])));
      largest_int8 = std::max(largest_int8, static_cast<double>(std::fabs(a[v] - f[v])));
      largest_int16 = std::max(largest_int16, static_cast<double>(std::fabs(b[v] - f[v])));
      if (f[v] > f[top_f]) top_f = v;
      if (a[v] > a[top_a]) top_a = v;
    }
    same_top1 += top_f == top_a;
  }
  EXPECT_LT(largest_int8, 0.05 * spread);
  EXPECT_GT(largest_int8, largest_int16);  // int8 codes round 256× coarser than int16's
  EXPECT_GE(same_top1, 36);                // of 40
}

TEST(ActivationCodes, SettingsNameTheTypesThatTakeThem) {
  ModelSettings settings;
  EXPECT_EQ(settings.activation_codes(WeightType::kQ8), std::nullopt);
  settings.activations = "int8";
  EXPECT_EQ(settings.activation_codes(WeightType::kQ8), ActivationCodes::kInt8);
  EXPECT_EQ(settings.activation_codes(WeightType::kQ4), ActivationCodes::kInt8);
  try {
    settings.activation_codes(WeightType::kF16);
    ADD_FAILURE() << "f16 with int8 activations was accepted";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "--activations int8 needs --weights q8 or q4 (f16 products take fp32 activations)");
  }
  settings.activations = "int16";
  EXPECT_THROW(settings.activation_codes(WeightType::kQ4), Error);
  settings.activations = "int4";
  EXPECT_THROW(settings.activation_codes(WeightType::kQ8), Error);
}

}  // namespace
}  // namespace minigen
