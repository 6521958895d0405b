// LoRA adapters against MiniMind's own code: the fixtures in tests/data/lora were written by
// tools/reference/make_lora_golden.py, which runs MiniMind's model_minimind.py with model_lora.py's apply_lora,
// save_lora and load_lora (fp32, no cache) on the random models `minigen init-random --seed 1` makes. Here minigen
// loads the same adapter files with --lora's loader, and its logits and greedy tokens — through the generate loop,
// with the KV cache — must be MiniMind's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "checkpoint/lora_loader.h"
#include "generate/generate.h"
#include "model/io/safetensors.h"
#include "model/test_models.h"
#include "model/transformer.h"

namespace minigen {
namespace {

const std::string kLoraDir = std::string(MINIGEN_TEST_DATA_DIR) + "/lora/";

struct Fixture {
  std::string golden;   // tests/data/lora/<golden>.golden.safetensors
  std::string adapter;  // the adapter file or PEFT folder
};

std::unique_ptr<Model> fixture_model(const std::map<std::string, std::string>& metadata, const std::string& adapter) {
  ModelConfig config = config_for_family(metadata.at("family"));
  if (metadata.count("layers")) config.num_layers = std::stoi(metadata.at("layers"));
  auto model = std::make_unique<Model>(config, random_weights(config, std::stoull(metadata.at("seed"))));
  model->adapter = load_lora_adapter(kLoraDir + adapter, config);
  return model;
}

std::vector<int> greedy_tokens(Transformer& transformer, const std::vector<int>& prompt, int count) {
  GenerateOptions options;
  options.max_new_tokens = count;
  options.ignore_eos = true;  // the fixtures ignore eos
  options.sampling.greedy = true;
  const std::vector<std::vector<int>> prompts = {prompt};
  return generate(transformer, prompts, options).sequences[0].token_ids;
}

class LoraParity : public ::testing::TestWithParam<Fixture> {};

TEST_P(LoraParity, LogitsAndGreedyTokensAreMiniMinds) {
  const std::string path = kLoraDir + GetParam().golden + ".golden.safetensors";
  const auto metadata = read_safetensors_metadata(path);
  const TensorMap golden = read_safetensors(path);
  const auto model = fixture_model(metadata, GetParam().adapter);
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const auto prompts = nlohmann::json::parse(metadata.at("prompts")).get<std::vector<std::vector<int>>>();
  ASSERT_EQ(prompts.size(), 3u);
  int differing_from_base = 0;
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    const std::string suffix = ".p" + std::to_string(k);
    KvCache cache(model->config.kv_layout(), static_cast<int>(prompts[k].size()));
    const ForwardRow row{&cache, prompts[k]};
    const std::vector<float>& logits = transformer.forward({&row, 1});
    const HostTensor& expected = golden.at("logits_last" + suffix);
    ASSERT_EQ(expected.values.size(), logits.size());
    double difference = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
      difference = std::max(difference, std::fabs(double(logits[i]) - expected.values[i]));
    }
    EXPECT_LE(difference, 2e-4) << GetParam().golden << " prompt " << k;
    std::printf("[lora parity] %s prompt %zu: max |logit difference| %.3g\n", GetParam().golden.c_str(), k, difference);

    const std::vector<int> ids = greedy_tokens(transformer, prompts[k], 32);
    const HostTensor& expected_ids = golden.at("greedy" + suffix);
    const HostTensor& margins = golden.at("greedy_margin" + suffix);
    ASSERT_EQ(ids.size(), expected_ids.values.size());
    for (std::size_t step = 0; step < ids.size(); ++step) {
      if (ids[step] == static_cast<int>(expected_ids.values[step])) continue;
      // Only a near-tie in MiniMind's own logits may go the other way; the sequences diverge after it.
      EXPECT_LT(margins.values[step], 2e-4) << GetParam().golden << " prompt " << k << " differs at step " << step;
      break;
    }
    // The adapter matters: without it the same prompt continues differently (else the test could not fail).
    Model base(model->config, model->weights);
    Transformer base_transformer(base, pool);
    const std::vector<int> base_ids = greedy_tokens(base_transformer, prompts[k], 32);
    for (std::size_t step = 0; step < ids.size(); ++step) differing_from_base += ids[step] != base_ids[step];
  }
  EXPECT_GT(differing_from_base, 16);
}

INSTANTIATE_TEST_SUITE_P(MiniMindLora, LoraParity,
                         ::testing::Values(Fixture{"tiny_r4", "tiny_r4.pth"},
                                           Fixture{"minimind3_r16", "minimind3_r16.pth"},
                                           Fixture{"minimind3-moe_r8", "minimind3-moe_r8.pth"},
                                           Fixture{"minimind2_r16", "minimind2_r16.pth"},
                                           Fixture{"minimind3_r16", "minimind3_peft_r16"},
                                           Fixture{"tiny_peft_all_r4", "tiny_peft_all_r4"}),
                         [](const auto& info) {
                           std::string name = info.param.adapter;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// The same adapter as PEFT (lora_alpha 32 = scale 2, lora_B stored as B/2) and as MiniMind's .pth: halving and
// doubling are exact in binary floating point, so the logits are the same bits.
TEST(LoraParity, APeftAdapterGivesTheBitsOfTheSameWeightsInMiniMindsFormat) {
  const auto metadata = read_safetensors_metadata(kLoraDir + "minimind3_r16.golden.safetensors");
  const auto pth = fixture_model(metadata, "minimind3_r16.pth");
  const auto peft = fixture_model(metadata, "minimind3_peft_r16");
  EXPECT_EQ(peft->adapter->scale, 2.0f);
  ThreadPool pool(2);
  Transformer a(*pth, pool), b(*peft, pool);
  const std::vector<int> prompt = testing::test_prompt(20, 4);
  KvCache cache_a(pth->config.kv_layout(), 20), cache_b(peft->config.kv_layout(), 20);
  const ForwardRow row_a{&cache_a, prompt, true}, row_b{&cache_b, prompt, true};
  const std::vector<float> logits_a = a.forward({&row_a, 1});
  const std::vector<float>& logits_b = b.forward({&row_b, 1});
  ASSERT_EQ(logits_a.size(), logits_b.size());
  EXPECT_EQ(std::memcmp(logits_a.data(), logits_b.data(), logits_a.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace minigen
