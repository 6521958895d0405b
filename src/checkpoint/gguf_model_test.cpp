#include "checkpoint/gguf_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <tuple>

#include "cache/kv_cache.h"
#include "checkpoint/gguf_model_test_util.h"
#include "checkpoint/gguf_tokenizer.h"
#include "checkpoint/model_loader.h"
#include "checkpoint/prompt_logits_test_util.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/memory_limit_test_util.h"
#include "model/dtype.h"
#include "model/io/gguf_test_builder.h"
#include "model/io/torch_pth_test_writer.h"
#include "model/test_models.h"
#include "model/transformer.h"
#include "ops/thread_pool.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::ScratchFileTest;

using testing::bit_identical;
using testing::export_gguf;
using testing::prompt_logits;
using testing::read_file;
using testing::save_random_model;

using testing::kGgufTestPrompt;

class GgufRoundTrip : public ScratchFileTest, public ::testing::WithParamInterface<std::string> {};

// f32 export → import is the same model: the same config, bit-identical logits, the same tokenizer and template.
TEST_P(GgufRoundTrip, F32ExportThenImportGivesBitIdenticalLogits) {
  const LoadedModel original = load_model(save_random_model(GetParam()));
  const fs::path gguf = export_gguf(original, GgufTensorType::kF32, GetParam() + ".gguf");
  const LoadedModel imported = load_model(gguf);
  EXPECT_EQ(imported.format, "gguf");
  EXPECT_EQ(imported.model->config, original.model->config);
  EXPECT_TRUE(
      bit_identical(prompt_logits(*imported.model, kGgufTestPrompt), prompt_logits(*original.model, kGgufTestPrompt)));

  const std::string text = "Hello, world! 你好 <|im_start|>user\n  two  spaces\n";
  EXPECT_EQ(imported.tokenizer->encode(text), original.tokenizer->encode(text));
  EXPECT_EQ(imported.tokenizer->chat_template(), original.tokenizer->chat_template());
  EXPECT_EQ(imported.tokenizer->bos_id(), original.tokenizer->bos_id());
  EXPECT_EQ(imported.tokenizer->eos_id(), original.tokenizer->eos_id());
  EXPECT_EQ(imported.tokenizer->pad_id(), original.tokenizer->pad_id());
  EXPECT_EQ(imported.tokenizer->vocab_size(), original.tokenizer->vocab_size());

  // llama.cpp puts bos in front of every prompt itself (llama-server --jinja strips the template's own bos text).
  std::string storage;
  const GgufFile file = read_file(gguf, storage);
  const GgufValue* add_bos = file.find("tokenizer.ggml.add_bos_token");
  ASSERT_NE(add_bos, nullptr);
  EXPECT_EQ(add_bos->type, GgufValueType::kBool);
  EXPECT_EQ(add_bos->integer(0), 1);
}

INSTANTIATE_TEST_SUITE_P(Families, GgufRoundTrip, ::testing::Values("tiny", "minimind3", "minimind2", "minimind3-moe"),
                         testing::FamilyTestName());

class GgufModelTest : public ScratchFileTest {};

// The message loading `changed` (written out by hand) gives, or "" if it loads.
std::string load_error(const GgufFile& changed) {
  const fs::path path = testing::scratch_path("changed.gguf");
  testing::write_bytes(path, testing::relaid_gguf(changed, 32));
  try {
    load_model(path);
  } catch (const Error& error) {
    return std::string(error.what());
  }
  return std::string();
}

TEST_F(GgufModelTest, TheArchitectureFollowsTheFamilyAndMiniMind2MoeIsRefused) {
  EXPECT_EQ(gguf_architecture(config_for_family("tiny")), "qwen3");
  EXPECT_EQ(gguf_architecture(config_for_family("minimind3")), "qwen3");
  EXPECT_EQ(gguf_architecture(config_for_family("minimind3-moe")), "qwen3moe");
  EXPECT_EQ(gguf_architecture(config_for_family("minimind2")), "llama");
  EXPECT_EQ(gguf_architecture(config_for_family("minimind2-small")), "llama");
  try {
    gguf_architecture(config_for_family("minimind2-moe"));
    FAIL() << "minimind2-moe exported";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("shared experts"), std::string::npos);
  }
}

// llama's q and k rows are stored in llama.cpp's pair order: GGUF row 2i + j of a head is HF row j·d/2 + i.
TEST_F(GgufModelTest, LlamaQueryRowsArePermutedAsLlamaCppExpects) {
  const LoadedModel original = load_model(save_random_model("minimind2"));
  std::string storage;
  const GgufFile file = read_file(export_gguf(original, GgufTensorType::kF32, "perm.gguf"), storage);
  EXPECT_EQ(file.find("general.architecture")->strings.at(0), "llama");
  const Matrix& q = original.model->weights.layers[0].q_proj;
  const int head_dim = original.model->config.head_dim;
  for (const GgufTensorInfo& info : file.tensors) {
    if (info.name != "blk.0.attn_q.weight") continue;
    ASSERT_EQ(info.dims, (std::vector<uint64_t>{static_cast<uint64_t>(q.cols), static_cast<uint64_t>(q.rows)}));
    const float* gguf = reinterpret_cast<const float*>(info.bytes.data());
    for (int i : {0, 1, 5}) {
      for (int j : {0, 1}) {
        const int hf_row = head_dim + j * head_dim / 2 + i;  // head 1
        const int gguf_row = head_dim + 2 * i + j;
        EXPECT_EQ(gguf[static_cast<std::size_t>(gguf_row) * q.cols + 3],
                  q.values[static_cast<std::size_t>(hf_row) * q.cols + 3]);
      }
    }
    return;
  }
  FAIL() << "no blk.0.attn_q.weight";
}

// The random model of save_random_model with every matrix rounded to `dtype` and the norms kept in fp32, as an
// f16/bf16 GGUF holds them.
std::unique_ptr<Model> rounded_model(const std::string& family, DType dtype) {
  const ModelConfig config = testing::test_config(family);
  ModelWeights weights = random_weights(config, 7);
  auto round = [dtype](Matrix& matrix) {
    std::vector<std::byte> bytes(matrix.values.size() * dtype_size_bytes(dtype));
    encode_from_f32(dtype, matrix.values.data(), matrix.values.size(), bytes.data());
    decode_to_f32(dtype, bytes.data(), matrix.values.size(), matrix.values.data());
  };
  round(weights.embed_tokens);
  for (LayerWeights& layer : weights.layers) {
    for (Matrix* matrix : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.mlp.gate, &layer.mlp.up,
                           &layer.mlp.down}) {
      round(*matrix);
    }
  }
  return std::make_unique<Model>(config, std::move(weights));
}

// f16 and bf16 files give the logits of the model with its matrices rounded to that type; Q8_0 and Q4_0 hold
// minigen's own q8/q4 codes, so they give the logits of --weights q8/q4 on the original, bit for bit.
TEST_F(GgufModelTest, EveryTypeRoundTrips) {
  for (const std::string family : {"tiny", "minimind2"}) {
    const LoadedModel original = load_model(save_random_model(family));
    for (const auto& [type, dtype] :
         {std::pair{GgufTensorType::kF16, DType::kF16}, std::pair{GgufTensorType::kBF16, DType::kBF16}}) {
      const std::unique_ptr<Model> reference = rounded_model(family, dtype);
      const LoadedModel imported = load_model(export_gguf(original, type, family + gguf_type_name(type) + ".gguf"));
      EXPECT_EQ(imported.stored_dtype, dtype) << family;
      EXPECT_TRUE(
          bit_identical(prompt_logits(*imported.model, kGgufTestPrompt), prompt_logits(*reference, kGgufTestPrompt)))
          << family << " " << gguf_type_name(type);
    }
    for (const auto& [type, weights] :
         {std::pair{GgufTensorType::kQ8_0, WeightType::kQ8}, std::pair{GgufTensorType::kQ4_0, WeightType::kQ4}}) {
      const LoadedModel imported = load_model(export_gguf(original, type, family + gguf_type_name(type) + ".gguf"));
      EXPECT_EQ(imported.model->weights.stored_quantization(), weights);
      EXPECT_TRUE(bit_identical(prompt_logits(*imported.model, kGgufTestPrompt, weights),
                                prompt_logits(*original.model, kGgufTestPrompt, weights)))
          << family << " " << gguf_type_name(type);
      // Exported again from the imported codes, the file is the same bytes: nothing was requantized.
      std::string first;
      std::string second;
      read_file(export_gguf(original, type, "a.gguf"), first);
      read_file(export_gguf(imported, type, "b.gguf"), second);
      EXPECT_EQ(first, second) << family << " " << gguf_type_name(type);
    }
  }
}

// The same file written again by hand — alignment 64, metadata reversed with general.alignment last, tensor infos
// reversed, junk between the tensors — loads as the same model.
TEST_F(GgufModelTest, AHandLaidOutFileWithAlignment64Loads) {
  const LoadedModel original = load_model(save_random_model("tiny"));
  std::string storage;
  const GgufFile file = read_file(export_gguf(original, GgufTensorType::kF32, "tiny.gguf"), storage);
  const fs::path relaid = testing::scratch_path("relaid.gguf");
  testing::write_bytes(relaid, testing::relaid_gguf(file, 64));
  const LoadedModel imported = load_model(relaid);
  EXPECT_TRUE(
      bit_identical(prompt_logits(*imported.model, kGgufTestPrompt), prompt_logits(*original.model, kGgufTestPrompt)));
}

TEST_F(GgufModelTest, MissingKeysAndUnknownTensorsAreNamed) {
  const LoadedModel original = load_model(save_random_model("tiny"));
  std::string storage;
  const GgufFile file = read_file(export_gguf(original, GgufTensorType::kF32, "tiny.gguf"), storage);
  GgufFile no_layers = file;
  std::erase_if(no_layers.metadata, [](const auto& entry) { return entry.first == "qwen3.block_count"; });
  EXPECT_NE(load_error(no_layers).find("no 'qwen3.block_count'"), std::string::npos);
  GgufFile renamed = file;
  renamed.tensors.back().name = "blk.0.attn_qkv.weight";
  EXPECT_NE(load_error(renamed).find("'blk.0.attn_qkv.weight' is not one of the qwen3 layout's"), std::string::npos);
  GgufFile zero_padded = file;
  zero_padded.tensors.back().name = "blk.03.ffn_down.weight";
  EXPECT_NE(load_error(zero_padded).find("'blk.03.ffn_down.weight' is not one of"), std::string::npos);
  GgufFile past_the_layers = file;
  past_the_layers.tensors.back().name = "blk.4.ffn_down.weight";  // tiny has layers 0 … 3
  EXPECT_NE(load_error(past_the_layers).find("'blk.4.ffn_down.weight' is not one of"), std::string::npos);
  GgufFile other_arch = file;
  other_arch.metadata.front().second = GgufValue::string("gemma");
  EXPECT_NE(load_error(other_arch).find("'gemma' is not one minigen runs"), std::string::npos);
  GgufFile other_tokenizer = file;
  for (auto& [key, value] : other_tokenizer.metadata) {
    if (key == "tokenizer.ggml.model") value = GgufValue::string("llama");
  }
  EXPECT_NE(load_error(other_tokenizer).find("byte-level BPE ('gpt2') only"), std::string::npos);
}

// A hyper-parameter that would make the first forward pass NaN (YaRN's betas and attention factor, the norm's
// epsilon, RoPE's base) is refused at load, naming the key, instead of loading and failing in generate with "logit
// of token 0 is NaN".
TEST_F(GgufModelTest, NanInfiniteAndOutOfRangeHyperParametersAreRefusedNamingTheKey) {
  const LoadedModel original = load_model(save_random_model("tiny"));
  std::string storage;
  GgufFile file = read_file(export_gguf(original, GgufTensorType::kF32, "tiny.gguf"), storage);
  file.metadata.emplace_back("qwen3.rope.scaling.type", GgufValue::string("yarn"));
  ASSERT_EQ(load_error(file), "");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::tuple<std::string, float, std::string>> cases = {
      {"rope.scaling.yarn_beta_fast", nan, "(0, 3.40282e+38], not nan"},
      {"rope.scaling.yarn_beta_fast", -32, "(0, 3.40282e+38], not -32"},
      {"rope.scaling.yarn_beta_slow", inf, "(0, 3.40282e+38], not inf"},
      {"rope.scaling.attn_factor", nan, "(0, 10], not nan"},
      {"rope.scaling.attn_factor", 1e6f, "(0, 10], not 1e+06"},
      {"rope.scaling.factor", inf, "(0, 3.40282e+38], not inf"},
      {"attention.layer_norm_rms_epsilon", nan, "(0, 1], not nan"},
      {"attention.layer_norm_rms_epsilon", inf, "(0, 1], not inf"},
      {"rope.freq_base", nan, "(1, 3.40282e+38], not nan"},
      {"rope.freq_base", 1, "(1, 3.40282e+38], not 1"},
  };
  for (const auto& [key, value, range] : cases) {
    GgufFile changed = file;
    std::erase_if(changed.metadata, [&](const auto& entry) { return entry.first == "qwen3." + key; });
    changed.metadata.emplace_back("qwen3." + key, GgufValue::float32(value));
    EXPECT_EQ(load_error(changed), testing::scratch_path("changed.gguf").string() + ": GGUF metadata 'qwen3." + key +
                                       "' must be in " + range)
        << key;
  }
}

// A header may claim any stack of pieces in few data bytes: {1, 1, 5,000,000} BF16 is 10 MB of data, but decoding
// five million 1×1 matrices first took 1.28 GB and 10 s. The count is checked against the config before any
// tensor is decoded, so the error comes inside a small address-space limit.
TEST_F(GgufModelTest, AStackedPieceCountThatIsNotTheModelsIsRefusedBeforeDecoding) {
  const LoadedModel original = load_model(save_random_model("tiny"));
  std::string storage;
  GgufFile file = read_file(export_gguf(original, GgufTensorType::kF32, "tiny.gguf"), storage);
  const std::vector<std::byte> claimed(std::size_t{2} * 5000000);
  for (GgufTensorInfo& info : file.tensors) {
    if (info.name != "blk.0.attn_q.weight") continue;
    info.dims = {1, 1, 5000000};
    info.type = GgufTensorType::kBF16;
    info.bytes = claimed;
  }
  const fs::path path = testing::scratch_path("stacked.gguf");
  testing::write_bytes(path, testing::relaid_gguf(file, 32));
  const testing::LimitedRun run = testing::run_with_memory_limit(uint64_t{128} << 20, [&] { load_model(path); });
  if (!testing::kAddressSpaceLimitWorks) GTEST_SKIP() << "no address-space limit under AddressSanitizer";
  EXPECT_EQ(run.outcome, testing::LimitedRun::Outcome::kError);
  EXPECT_EQ(run.message, path.string() + ": tensor 'blk.0.attn_q.weight' stacks 5000000 matrices, not 1");
}

}  // namespace
}  // namespace minigen
