#include "checkpoint/model_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "cache/kv_cache.h"
#include "checkpoint/prompt_logits_test_util.h"
#include "core/error.h"
#include "core/peak_memory_test_util.h"
#include "model/io/claimed_tensors_test_util.h"
#include "model/io/safetensors.h"
#include "model/io/torch_pth_test_writer.h"
#include "model/transformer.h"
#include "ops/thread_pool.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::ScratchFileTest;

using testing::prompt_logits;

const std::vector<int> kLoaderPrompt = {1, 2043, 300, 3684, 719};

class ModelLoaderTest : public ScratchFileTest {};

// The shipped chat model written as a MiniMind state dict (torch.save's zip + pickle, one storage per tensor) loads
// through the .pth path — configuration inferred from the tensor shapes, tokenizer from a flag — into the same model:
// the same configuration and bit-identical logits as the safetensors directory.
TEST_F(ModelLoaderTest, APthStateDictLoadsAsTheSameModelAsItsSafetensorsDirectory) {
  const fs::path directory = minigen_home() / "models" / "minigen-tiny-sft";
  const LoadedModel reference = load_model(directory);
  EXPECT_EQ(reference.format, "safetensors");

  const fs::path pth = testing::scratch_path("minigen-tiny-sft.pth");
  testing::write_bytes(pth, testing::pth_from_safetensors(directory / "model.safetensors", DType::kF32));

  LoadOptions options;
  options.num_q_heads = 8;
  options.tokenizer_path = directory;
  const LoadedModel loaded = load_model(pth, options);
  EXPECT_EQ(loaded.format, "pth");
  const ModelConfig& got = loaded.model->config;
  const ModelConfig& want = reference.model->config;
  EXPECT_EQ(got.vocab_size, 6400);
  EXPECT_EQ(got.hidden_size, want.hidden_size);
  EXPECT_EQ(got.num_layers, want.num_layers);
  EXPECT_EQ(got.num_q_heads, want.num_q_heads);
  EXPECT_EQ(got.num_kv_heads, want.num_kv_heads);
  EXPECT_EQ(got.intermediate_size, want.intermediate_size);
  EXPECT_EQ(loaded.tokenizer->vocab_size(), 6400);

  const std::vector<float> expected = prompt_logits(*reference.model, kLoaderPrompt);
  const std::vector<float> actual = prompt_logits(*loaded.model, kLoaderPrompt);
  ASSERT_EQ(actual.size(), expected.size());
  EXPECT_EQ(std::memcmp(actual.data(), expected.data(), actual.size() * sizeof(float)), 0);
}

// MiniMind's trainer writes out/pretrain_768.pth and keeps the tokenizer in model/: a .pth with no tokenizer.json
// beside it and no --tokenizer gets a message that says what to pass.
// `minigen quantize` output: codes and scales loaded back pack into the very panels quantization at load builds, so
// the logits are bit-identical to --weights q8/q4 on the original; the file is a quarter (q8) of the fp32 one.
TEST_F(ModelLoaderTest, AQuantizedDirectoryComputesTheSameBitsAsQuantizingAtLoad) {
  const fs::path directory = minigen_home() / "models" / "minigen-tiny-base";
  const LoadedModel original = load_model(directory);
  for (WeightType type : {WeightType::kQ8, WeightType::kQ4}) {
    const fs::path out = testing::scratch_path(std::string("quantized-") + std::string(weight_type_name(type)));
    save_quantized_model_directory(out, original.model->config, original.model->weights,
                                   read_tokenizer_files(directory), type, "card");
    const LoadedModel quantized = load_model(out);
    EXPECT_EQ(quantized.model->weights.stored_quantization(), type);
    const std::vector<float> expected = prompt_logits(*original.model, kLoaderPrompt, type);
    const std::vector<float> got = prompt_logits(*quantized.model, kLoaderPrompt, type);
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0) << weight_type_name(type);
    EXPECT_THROW(prompt_logits(*quantized.model, kLoaderPrompt, WeightType::kF32),
                 Error);  // codes cannot run as floats
    // 4.85 M parameters: q8 1.0625 B and q4 0.5625 B per weight (the embedding at q8), norms at 4 B, plus the header.
    const auto bytes = fs::file_size(out / "model.safetensors");
    const auto f32_bytes = fs::file_size(directory / "model.safetensors");
    EXPECT_LT(bytes, f32_bytes / (type == WeightType::kQ8 ? 3 : 5));
    EXPECT_TRUE(fs::exists(out / "README.md"));
  }
}

TEST_F(ModelLoaderTest, APthWithoutATokenizerBesideItNamesTheFlagToPass) {
  const fs::path directory = fs::temp_directory_path() / ("minigen-loader-" + std::to_string(::getpid()));
  fs::create_directories(directory);
  const fs::path pth = directory / "pretrain_768.pth";
  testing::write_bytes(pth, testing::pth_from_safetensors(
                                minigen_home() / "models" / "minigen-tiny-sft" / "model.safetensors", DType::kF16));
  try {
    load_model(pth);
    ADD_FAILURE() << "loaded without a tokenizer";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()),
              "no tokenizer.json beside " + pth.string() +
                  "; a .pth holds no tokenizer: pass --tokenizer DIR (the folder with tokenizer.json and "
                  "tokenizer_config.json, e.g. MiniMind's model/)");
  }
  LoadOptions options;
  options.tokenizer_path = minigen_home() / "models" / "minigen-tiny-sft";
  EXPECT_EQ(load_model(pth, options).stored_dtype, DType::kF16);
  fs::remove_all(directory);
}

// The message load_model(path) fails with.
std::string load_error(const fs::path& path, const LoadOptions& options = {}) {
  try {
    load_model(path, options);
  } catch (const Error& error) {
    return error.what();
  }
  return "loaded";
}

// A model folder whose safetensors file claims one unused 2 GB tensor besides the shipped model's (a hole: no disk)
// is refused from its header — by `info`, `generate` and the server's weight update alike — at a peak cost of
// megabytes: before, every tensor was copied into fp32 first and the refusal came after 4,143 MB.
TEST_F(ModelLoaderTest, AnUnusedHugeTensorIsRefusedFromTheHeaderWithoutReadingIt) {
  const fs::path sft = minigen_home() / "models" / "minigen-tiny-sft";
  const fs::path directory = testing::scratch_path("claims-model");
  fs::create_directories(directory);
  for (const char* name : {"config.json", "tokenizer.json", "tokenizer_config.json"}) {
    fs::copy_file(sft / name, directory / name);
  }
  ASSERT_TRUE(testing::write_safetensors_with_claims(directory / "model.safetensors", sft / "model.safetensors",
                                                     {{"model.extra.weight", "F16", {1024, 1024 * 1024}}}));
  ASSERT_GT(fs::file_size(directory / "model.safetensors"), uint64_t{2} << 30);
  const LoadedModel served = load_model(sft);
  std::string message;
  const std::optional<uint64_t> rise = testing::peak_rise_bytes([&] { message = load_error(directory); });
  EXPECT_EQ(message,
            "the model file holds tensor 'model.extra.weight' [1024, 1048576] that this configuration does not use "
            "(1 unexpected tensor(s))");
  std::string replacement_message;
  const std::optional<uint64_t> replacement_rise = testing::peak_rise_bytes([&] {
    try {
      load_replacement_weights(directory, served.model->config, {});
    } catch (const Error& error) {
      replacement_message = error.what();
    }
  });
  EXPECT_NE(replacement_message.find("1 unexpected tensor(s)"), std::string::npos) << replacement_message;
  if (!rise || !replacement_rise) GTEST_SKIP() << "this kernel does not let a process reset its peak RSS";
  EXPECT_LT(*rise, uint64_t{64} << 20);
  EXPECT_LT(*replacement_rise, uint64_t{64} << 20);
  fs::remove_all(directory);
}

// MiniMind's trainer writes .pth files to out/ and keeps the tokenizer in model/: pointed at either folder, the
// loader says what is there and what to pass instead of only "no config.json".
TEST_F(ModelLoaderTest, MiniMindsOutAndModelFoldersSayWhatToPass) {
  const fs::path root = fs::temp_directory_path() / ("minigen-folders-" + std::to_string(::getpid()));
  const fs::path out = root / "out";
  const fs::path model = root / "model";
  fs::create_directories(out);
  fs::create_directories(model);
  const fs::path sft = minigen_home() / "models" / "minigen-tiny-sft";
  const auto pth_bytes = testing::pth_from_safetensors(sft / "model.safetensors", DType::kF16);
  testing::write_bytes(out / "pretrain_512.pth", pth_bytes);
  testing::write_bytes(out / "full_sft_512.pth", pth_bytes);
  fs::copy_file(sft / "tokenizer.json", model / "tokenizer.json");
  fs::copy_file(sft / "tokenizer_config.json", model / "tokenizer_config.json");
  EXPECT_EQ(load_error(out), "no config.json in " + out.string() +
                                 ", but it holds 2 checkpoints: full_sft_512.pth, pretrain_512.pth; pass one as the "
                                 "model, e.g. -m " +
                                 (out / "full_sft_512.pth").string() +
                                 " --tokenizer DIR (the folder with tokenizer.json, e.g. MiniMind's model/)");
  EXPECT_EQ(load_error(model), "no config.json in " + model.string() +
                                   ": it holds a tokenizer but no model weights (MiniMind's model/ folder?); pass it "
                                   "as --tokenizer " +
                                   model.string() +
                                   " and the checkpoint as -m, e.g. -m out/full_sft_512.pth (MiniMind's trainer "
                                   "writes them to out/)");
  EXPECT_EQ(load_error(root), "no config.json in " + root.string() +
                                  ": a model is a directory with config.json and model.safetensors (or "
                                  "pytorch_model.bin), or a .pth, .safetensors or .gguf file");
  // What the messages advise works, with --tokenizer naming either file of the pair.
  LoadOptions options;
  options.tokenizer_path = model / "tokenizer_config.json";
  const LoadedModel loaded = load_model(out / "full_sft_512.pth", options);
  EXPECT_EQ(loaded.format, "pth");
  EXPECT_EQ(loaded.tokenizer->encode("In the beginning"), load_tokenizer(sft)->encode("In the beginning"));
  EXPECT_EQ(tokenizer_json_path(model / "tokenizer_config.json"), model / "tokenizer.json");
  EXPECT_EQ(read_tokenizer_files(model / "tokenizer_config.json").tokenizer_config_json.has_value(), true);
  fs::remove_all(root);
}

}  // namespace
}  // namespace minigen
