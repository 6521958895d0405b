// LoRA in the forward pass: an adapter with B = 0 changes no bit; unmerged equals merged (W + B·A) up to rounding;
// and the exactness contract with adapters — a row's logits are bit-identical alone, in a batch mixing other
// adapters and none, prefilled or decoded on the cache, on 1 or 3 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "core/error.h"
#include "model/lora_adapter.h"
#include "model/lora_test_adapters.h"
#include "model/test_models.h"
#include "model/transformer.h"

namespace minigen {
namespace {

using testing::adaptable_modules;
using testing::random_lora;
using testing::random_test_model;
using testing::test_prompt;

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Logits at every position of `tokens`, one row, one call.
std::vector<float> prompt_logits(Transformer& transformer, const std::vector<int>& tokens,
                                 const LoraAdapter* adapter = nullptr) {
  KvCache cache(transformer.model().config.kv_layout(), static_cast<int>(tokens.size()));
  const ForwardRow row{&cache, tokens, true, adapter};
  return transformer.forward({&row, 1});
}

class LoraFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(LoraFamily, AnAdapterWhoseBIsZeroChangesNoBit) {
  auto model = random_test_model(GetParam());
  const LoraAdapter zero = random_lora(model->config, adaptable_modules(model->config), 4, 7, /*b_std=*/0.0f);
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<int> tokens = test_prompt(9, 2);
  EXPECT_TRUE(same_bits(prompt_logits(transformer, tokens), prompt_logits(transformer, tokens, &zero)));
}

// Every adaptable matrix wrapped (for MoE: each routed and shared expert's too): the unmerged run against the model
// with W + B·A merged in fp32 — the same function up to float rounding, and the same argmax at every position.
TEST_P(LoraFamily, UnmergedMatchesTheMergedWeightsOnEveryMatrix) {
  auto model = random_test_model(GetParam());
  const LoraAdapter adapter = random_lora(model->config, adaptable_modules(model->config), 4, 11, 0.2f, 1.5f);
  ModelWeights merged_weights = model->weights;
  merge_lora_into(merged_weights, adapter);
  const Model merged(model->config, std::move(merged_weights));
  ThreadPool pool(2);
  Transformer base(*model, pool);
  Transformer merged_transformer(merged, pool);
  const std::vector<int> tokens = test_prompt(12, 3);
  const std::vector<float> plain = prompt_logits(base, tokens);
  const std::vector<float> unmerged = prompt_logits(base, tokens, &adapter);
  const std::vector<float> expected = prompt_logits(merged_transformer, tokens);
  const int vocab = model->config.vocab_size;
  double largest = 0, difference = 0, moved = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    largest = std::max(largest, std::fabs(double(expected[i])));
    difference = std::max(difference, std::fabs(double(unmerged[i]) - expected[i]));
    moved = std::max(moved, std::fabs(double(unmerged[i]) - plain[i]));
  }
  EXPECT_LT(difference, 1e-4 * largest) << "largest logit " << largest;
  EXPECT_GT(moved, 1000 * difference) << "the adapter must move the logits far more than rounding does";
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    const auto argmax = [&](const std::vector<float>& logits) {
      return std::max_element(logits.begin() + p * vocab, logits.begin() + (p + 1) * vocab) - logits.begin();
    };
    EXPECT_EQ(argmax(unmerged), argmax(expected)) << "position " << p;
  }
}

// Three rows — adapter a, adapter b, no adapter — prefilled together and then decoded together, against each row
// alone, fed token by token on its own cache, on 1 and 3 threads: memcmp-equal logits throughout.
TEST_P(LoraFamily, ARowsLogitsAreTheSameAloneAndInAMixedBatch) {
  auto model = random_test_model(GetParam());
  const ModelConfig& config = model->config;
  const LoraAdapter a = random_lora(config, adaptable_modules(config, /*attention_only=*/true), 8, 21, 0.2f);
  const LoraAdapter b = random_lora(config, adaptable_modules(config), 4, 22, 0.2f, 2.0f);
  const std::vector<const LoraAdapter*> adapters = {&a, &b, nullptr};
  const std::vector<std::vector<int>> prompts = {test_prompt(7, 1), test_prompt(11, 2), test_prompt(5, 3)};
  constexpr int kSteps = 4;
  const int vocab = config.vocab_size;

  // Alone, one token per call: the last position's logits of each prefix.
  std::vector<std::vector<float>> alone(3);
  {
    ThreadPool pool(1);
    Transformer transformer(*model, pool);
    for (int r = 0; r < 3; ++r) {
      KvCache cache(config.kv_layout(), 32);
      std::vector<int> sequence = prompts[r];
      for (int i = 0; i < static_cast<int>(prompts[r].size()) + kSteps; ++i) {
        if (i >= static_cast<int>(sequence.size())) sequence.push_back((sequence.back() * 7 + r) % vocab);
        const std::vector<int> one = {sequence[i]};
        const ForwardRow row{&cache, one, false, adapters[r]};
        const std::vector<float>& logits = transformer.forward({&row, 1});
        if (i + 1 >= static_cast<int>(prompts[r].size())) alone[r].insert(alone[r].end(), logits.begin(), logits.end());
      }
    }
  }
  for (int threads : {1, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    ThreadPool pool(threads);
    Transformer transformer(*model, pool);
    std::vector<std::unique_ptr<KvCache>> caches;
    std::vector<std::vector<int>> sequences = prompts;
    std::vector<std::vector<float>> batched(3);
    for (int r = 0; r < 3; ++r) caches.push_back(std::make_unique<KvCache>(config.kv_layout(), 32));
    for (int step = 0; step <= kSteps; ++step) {
      std::vector<std::vector<int>> feeds(3);
      std::vector<ForwardRow> rows;
      for (int r = 0; r < 3; ++r) {
        if (step > 0) sequences[r].push_back((sequences[r].back() * 7 + r) % vocab);
        feeds[r] = step == 0 ? sequences[r] : std::vector<int>{sequences[r].back()};
        rows.push_back(ForwardRow{caches[r].get(), feeds[r], false, adapters[r]});
      }
      const std::vector<float>& logits = transformer.forward(rows);
      for (int r = 0; r < 3; ++r) {
        batched[r].insert(batched[r].end(), logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
      }
    }
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(same_bits(alone[r], batched[r])) << "row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, LoraFamily,
                         ::testing::Values("tiny", "minimind3", "minimind3-moe", "minimind2", "minimind2-moe"),
                         testing::FamilyTestName());

// The adapter the model was loaded with (Model::adapter) is what rows without their own run with.
TEST(Lora, TheModelsOwnAdapterAppliesToRowsThatNameNone) {
  auto model = random_test_model("tiny");
  auto adapter =
      std::make_shared<const LoraAdapter>(random_lora(model->config, adaptable_modules(model->config), 4, 5));
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<int> tokens = test_prompt(6, 1);
  const std::vector<float> explicit_row = prompt_logits(transformer, tokens, adapter.get());
  const std::vector<float> plain = prompt_logits(transformer, tokens);
  model->adapter = adapter;
  EXPECT_TRUE(same_bits(prompt_logits(transformer, tokens), explicit_row));
  EXPECT_FALSE(same_bits(plain, explicit_row));
}

// The parameter count the lab and the CLI print: rank · (in + out) per wrapped matrix. minimind-3 (768 wide, 8
// layers) with MiniMind's rank-16 q_proj and o_proj: 8 · 2 · 16 · (768 + 768) = 393,216 — 0.6 % of its 64 M.
TEST(Lora, ParameterCountIsRankTimesInPlusOut) {
  const ModelConfig config = config_for_family("minimind3");
  std::vector<std::string> square;
  for (const std::string& module : adaptable_modules(config, true)) {
    if (module.ends_with("q_proj") || module.ends_with("o_proj")) square.push_back(module);
  }
  const LoraAdapter adapter = random_lora(config, square, 16, 1);
  EXPECT_EQ(adapter.parameter_count(), 393216);
  EXPECT_NEAR(100.0 * adapter.parameter_count() / config.parameter_count(), 0.6, 0.05);
  EXPECT_EQ(adapter.summary(), "q_proj, o_proj in 8 of 8 layers, rank 16");
}

TEST(Lora, ChecksEveryPairAgainstTheModel) {
  const ModelConfig config = testing::test_config("tiny");
  const auto message_of = [&](std::vector<LoraTensors> tensors) {
    try {
      lora_from_tensors(config, std::move(tensors), 1.0f, "x.pth", "test");
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("(no error)");
  };
  const auto one = [&](const std::string& module, int rank) {
    return testing::random_lora_tensors(config, {module}, rank, 1);
  };
  EXPECT_NE(message_of(one("model.layers.9.self_attn.q_proj", 4)).find("but the model has 4 layers"),
            std::string::npos);
  auto unknown = one("model.layers.0.self_attn.q_proj", 4);
  unknown[0].module = "model.layers.0.self_attn.qkv_proj";
  EXPECT_NE(message_of(unknown).find("'model.layers.0.self_attn.qkv_proj', which is not a module of this model"),
            std::string::npos);
  unknown[0].module = "lm_head";
  EXPECT_NE(message_of(unknown).find("which minigen does not adapt"), std::string::npos);
  EXPECT_NE(message_of(one("model.layers.0.self_attn.k_proj", 65)).find("rank 65; a rank must be between 1 and"),
            std::string::npos);  // k_proj is 64 × 256
  auto wrong_shape = one("model.layers.0.self_attn.q_proj", 4);
  wrong_shape[0].b.shape = {4, 256};
  EXPECT_NE(message_of(wrong_shape).find("has shape [4, 256] but the model needs [256, 4]"), std::string::npos);
  auto not_finite = one("model.layers.1.mlp.down_proj", 2);
  not_finite[0].a.values[17] = std::nanf("");
  EXPECT_NE(message_of(not_finite).find("down_proj A' holds a value that is not finite"), std::string::npos);
  auto twice = one("model.layers.0.self_attn.o_proj", 2);
  twice.push_back(twice[0]);
  EXPECT_NE(message_of(twice).find("holds 'model.layers.0.self_attn.o_proj' twice"), std::string::npos);
  EXPECT_NE(message_of({}).find("holds no LoRA matrices"), std::string::npos);
}

}  // namespace
}  // namespace minigen
