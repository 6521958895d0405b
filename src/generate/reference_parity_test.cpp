// minigen against the independent PyTorch reference (tools/reference): the fixtures in tests/data/golden were written
// by `tools/reference/make_golden.py` from random models that `minigen init-random` makes; here the same models are
// rebuilt in memory (random_weights is deterministic) and must give the reference's logits (max |Δ| ≤ 1e-4), its
// 64-token greedy continuations (token for token) and its sampler masks (exactly).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cache/kv_cache.h"
#include "checkpoint/model_loader.h"
#include "generate/generate.h"
#include "model/io/safetensors.h"
#include "model/test_models.h"
#include "sampling/sampler_chain.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

const std::string kGoldenDir = std::string(MINIGEN_TEST_DATA_DIR) + "/golden/";

// Compares one model against its fixture: logits at every prompt position (max |Δ| ≤ 1e-4) and the 64-token greedy
// continuations without and with a repetition penalty (identical, except after a step where the reference's top two
// logits were closer than the tolerance).
void expect_matches_fixture(const Model& model, const TensorMap& golden,
                            const std::map<std::string, std::string>& metadata, const std::string& label) {
  ThreadPool pool(2);
  Transformer transformer(model, pool);
  const auto prompts = nlohmann::json::parse(metadata.at("prompts")).get<std::vector<std::vector<int>>>();
  ASSERT_EQ(prompts.size(), 3u);

  for (std::size_t k = 0; k < prompts.size(); ++k) {
    const std::string suffix = ".p" + std::to_string(k);
    // Logits at every position of the prompt.
    KvCache cache(model.config.kv_layout(), static_cast<int>(prompts[k].size()));
    ForwardRow row{&cache, prompts[k], true};
    const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
    const HostTensor& expected = golden.at("logits" + suffix);
    ASSERT_EQ(expected.values.size(), logits.size());
    double max_difference = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
      max_difference = std::max(max_difference, std::fabs(double(logits[i]) - expected.values[i]));
    }
    EXPECT_LE(max_difference, 1e-4) << label << " prompt " << k;
    std::printf("[parity] %s prompt %zu (%zu tokens): max |logit difference| = %.3g\n", label.c_str(), k,
                prompts[k].size(), max_difference);

    // Decode-step logits: the prompt in one call, then the reference's greedy tokens one at a time, as generate feeds
    // them; at every step the reference's eight largest logits (looked up by id) must match.
    {
      const HostTensor& fed = golden.at("greedy" + suffix);
      const HostTensor& top_ids = golden.at("step_top_ids" + suffix);
      const HostTensor& top_values = golden.at("step_top" + suffix);
      const std::size_t steps = fed.values.size();
      ASSERT_EQ(top_ids.shape, (std::vector<int64_t>{static_cast<int64_t>(steps), 8}));
      KvCache decode_cache(model.config.kv_layout(), static_cast<int>(prompts[k].size() + steps));
      const ForwardRow prefill{&decode_cache, prompts[k], false};
      std::vector<float> step_logits = transformer.forward(std::span(&prefill, 1));
      double max_step_difference = 0;
      for (std::size_t step = 0; step < steps; ++step) {
        if (step > 0) {
          const int token = static_cast<int>(fed.values[step - 1]);
          const ForwardRow one{&decode_cache, std::span(&token, 1), false};
          step_logits = transformer.forward(std::span(&one, 1));
        }
        for (std::size_t j = 0; j < 8; ++j) {
          const int id = static_cast<int>(top_ids.values[step * 8 + j]);
          max_step_difference =
              std::max(max_step_difference, std::fabs(double(step_logits.at(id)) - top_values.values[step * 8 + j]));
        }
      }
      EXPECT_LE(max_step_difference, 1e-4) << label << " prompt " << k << ": decode-step logits";
    }

    // Greedy continuations under MiniMind's default filters, without and with a repetition penalty.
    for (const std::string& kind : {std::string("greedy"), std::string("greedy_penalty")}) {
      const auto settings = nlohmann::json::parse(metadata.at(kind + "_settings"));
      GenerateOptions options;
      options.max_new_tokens = settings["max_new_tokens"];
      options.ignore_eos = true;  // the reference ran with eos_token_id None
      options.sampling.greedy = true;
      options.sampling.temperature = settings["temperature"];
      options.sampling.top_k = settings["top_k"];
      options.sampling.top_p = settings["top_p"];
      options.sampling.repetition_penalty = settings["repetition_penalty"];
      const std::vector<std::vector<int>> one_prompt = {prompts[k]};
      const std::vector<int> ids = generate(transformer, one_prompt, options).sequences[0].token_ids;
      const HostTensor& expected_ids = golden.at(kind + suffix);
      const HostTensor& margins = golden.at(kind + "_margin" + suffix);
      ASSERT_EQ(ids.size(), expected_ids.values.size());
      for (std::size_t step = 0; step < ids.size(); ++step) {
        if (ids[step] == static_cast<int>(expected_ids.values[step])) continue;
        // A different choice is only acceptable where the reference's top two logits were closer than the tolerance;
        // after it the sequences diverge, so stop comparing.
        EXPECT_LT(margins.values[step], 1e-4) << label << " " << kind << " prompt " << k << " differs at step " << step
                                              << ": " << ids[step] << " vs " << expected_ids.values[step];
        break;
      }
    }
  }
}

class ReferenceParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceParity, LogitsAndGreedyContinuationsMatchTheReference) {
  const std::string path = kGoldenDir + GetParam() + ".safetensors";
  const auto metadata = read_safetensors_metadata(path);
  ModelConfig config = config_for_family(metadata.at("family"));
  config.num_layers = std::stoi(metadata.at("layers"));
  const Model model(config, random_weights(config, std::stoull(metadata.at("seed"))));
  expect_matches_fixture(model, read_safetensors(path), metadata, GetParam());
}

INSTANTIATE_TEST_SUITE_P(RandomModels, ReferenceParity,
                         ::testing::Values("tiny", "minimind3", "minimind3-moe", "minimind2", "minimind2-moe"),
                         testing::FamilyTestName());

// The shipped trained models (models/) against fixtures the reference computed from the same files. Their prompts are
// real text; the fixture's ids come from a Python tokenizer, so minigen's tokenizer and chat template must agree.
class ShippedModelParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedModelParity, TokenizerLogitsAndGreedyContinuationsMatchTheReference) {
  const std::string path = kGoldenDir + GetParam() + ".safetensors";
  const auto metadata = read_safetensors_metadata(path);
  const LoadedModel loaded = load_model(minigen_home() / "models" / GetParam());

  const auto prompts = nlohmann::json::parse(metadata.at("prompts")).get<std::vector<std::vector<int>>>();
  const auto texts = nlohmann::json::parse(metadata.at("prompt_texts"));
  ASSERT_EQ(texts.size(), prompts.size());
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    const std::string kind = texts[k][0], text = texts[k][1];
    std::vector<int> ids;
    if (kind == "base") {
      ids = encode_base_prompt(*loaded.tokenizer, text);
    } else {
      const ChatMessage question{"user", text};
      ids = loaded.tokenizer->encode(render_chatml(std::span(&question, 1), true, false));
    }
    EXPECT_EQ(ids, prompts[k]) << kind << " prompt " << k;
  }
  expect_matches_fixture(*loaded.model, read_safetensors(path), metadata, GetParam());
}

INSTANTIATE_TEST_SUITE_P(TrainedModels, ShippedModelParity, ::testing::Values("minigen-tiny-base", "minigen-tiny-sft"),
                         testing::FamilyTestName());

SamplingParams params_of_case(const nlohmann::json& c) {
  SamplingParams params;
  params.temperature = c["temperature"];
  params.top_k = c["top_k"];
  params.top_p = c["top_p"];
  params.top_p_rule = parse_top_p_rule(c["top_p_rule"].get<std::string>());
  params.min_p = c["min_p"];
  params.repetition_penalty = c["repetition_penalty"];
  return params;
}

TEST(ReferenceParity, SamplerMasksMatchTheReferenceExactly) {
  std::ifstream in(kGoldenDir + "sampler_masks.json");
  ASSERT_TRUE(in) << "missing sampler_masks.json";
  const auto fixture = nlohmann::json::parse(in);
  int checked = 0;
  for (const auto& c : fixture["cases"]) {
    const SamplerChain chain(params_of_case(c));
    const auto logits = c["logits"].get<std::vector<float>>();
    const auto history = c["history"].get<std::vector<int>>();
    const std::vector<uint8_t> mask = chain.kept_mask(logits, SamplingContext{history, 0, 0});
    const auto expected = c["kept"].get<std::vector<int>>();
    ASSERT_EQ(mask.size(), expected.size());
    for (std::size_t i = 0; i < mask.size(); ++i) {
      EXPECT_EQ(mask[i], expected[i]) << c["name"] << " id " << i;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 190);

  // The boundary cases: where only the order of tied logits decides, the kept count is the robust part (which of
  // the tied ids stay depends on each implementation's sort); where float rounding decides, the count may move by
  // one token, no more.
  int boundary_checked = 0;
  for (const auto& c : fixture["boundary_cases"]) {
    const SamplerChain chain(params_of_case(c));
    const std::vector<uint8_t> mask = chain.kept_mask(c["logits"].get<std::vector<float>>(),
                                                      SamplingContext{c["history"].get<std::vector<int>>(), 0, 0});
    const int kept = static_cast<int>(std::count(mask.begin(), mask.end(), uint8_t{1}));
    const int expected = c["kept_count"];
    if (c["float_boundary"].get<bool>()) {
      EXPECT_LE(std::abs(kept - expected), 1) << c["name"];
    } else {
      EXPECT_EQ(kept, expected) << c["name"];
    }
    ++boundary_checked;
  }
  EXPECT_EQ(boundary_checked, 26);
}

}  // namespace
}  // namespace minigen
