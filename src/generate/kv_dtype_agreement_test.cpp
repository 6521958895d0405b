// The shipped trained models with a narrower KV cache: greedy continuations of real prompts — the reference
// fixtures' three (a Bible verse, a dictionary entry, a chat question) and the module's 183-token Genesis prompt —
// with bf16, f16 and int8 K and V against f32. The narrow types round what is stored, so tokens may part after a
// near-tie; the test prints the agreement and holds each dtype to what was measured.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "core/file_io.h"
#include "generate/generate.h"
#include "model/io/safetensors.h"
#include "model/test_models.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

const std::string kKvAgreementGoldenDir = std::string(MINIGEN_TEST_DATA_DIR) + "/golden/";
constexpr int kNewTokens = 64;

// Measured on the 8 (model, prompt) pairs: bf16 and f16 agree with f32 on all 64 tokens of every prompt; int8 on
// 7 of the 8, the SFT model's chat prompt parting at token 4 (after a near-tie) — so int8 is held to 4.
int agreeing_prefix_at_least(KvDType dtype) { return dtype == KvDType::kInt8 ? 4 : kNewTokens; }

struct Agreement {
  int same = 0;  // positions where both chose the same token
  int first_divergence = -1;
};

Agreement compare(const std::vector<int>& a, const std::vector<int>& b) {
  Agreement agreement;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) {
      ++agreement.same;
    } else if (agreement.first_divergence < 0) {
      agreement.first_divergence = static_cast<int>(i);
    }
  }
  return agreement;
}

class ShippedModelKvDType : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedModelKvDType, GreedyTokensAgreeWithTheF32Cache) {
  const auto metadata = read_safetensors_metadata(kKvAgreementGoldenDir + GetParam() + ".safetensors");
  auto prompts = nlohmann::json::parse(metadata.at("prompts")).get<std::vector<std::vector<int>>>();
  const LoadedModel loaded = load_model(minigen_home() / "models" / GetParam());
  const std::string genesis =
      read_whole_file(std::string(MINIGEN_SOURCE_DIR) + "/examples/genesis-183.txt", 1 << 20, "the Genesis prompt");
  prompts.push_back(encode_base_prompt(*loaded.tokenizer, genesis));
  ThreadPool pool(2);
  Transformer transformer(*loaded.model, pool);
  GenerateOptions options;
  options.max_new_tokens = kNewTokens;
  options.ignore_eos = true;
  options.sampling.greedy = true;
  const GenerateResult exact = generate(transformer, prompts, options);
  for (KvDType dtype : {KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    options.kv_dtype = dtype;
    const GenerateResult narrow = generate(transformer, prompts, options);
    for (std::size_t k = 0; k < prompts.size(); ++k) {
      const Agreement agreement = compare(exact.sequences[k].token_ids, narrow.sequences[k].token_ids);
      std::printf("[kv-dtype] %s prompt %zu (%zu tokens): %s agrees with f32 on %d of %d greedy tokens",
                  GetParam().c_str(), k, prompts[k].size(), std::string(kv_dtype_name(dtype)).c_str(), agreement.same,
                  kNewTokens);
      if (agreement.first_divergence >= 0) std::printf(", first divergence at %d", agreement.first_divergence);
      std::printf("\n");
      EXPECT_GE(agreement.first_divergence < 0 ? kNewTokens : agreement.first_divergence,
                agreeing_prefix_at_least(dtype))
          << GetParam() << " prompt " << k << " " << kv_dtype_name(dtype);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TrainedModels, ShippedModelKvDType, ::testing::Values("minigen-tiny-base", "minigen-tiny-sft"),
                         testing::FamilyTestName());

}  // namespace
}  // namespace minigen
