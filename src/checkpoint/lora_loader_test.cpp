// Reading adapter files: MiniMind's .pth (save_lora's names, fp16) and PEFT folders, and every hostile file one
// clear error.
#include "checkpoint/lora_loader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cache/kv_cache.h"
#include "checkpoint/gguf_lora.h"
#include "core/error.h"
#include "core/peak_memory_test_util.h"
#include "model/io/claimed_tensors_test_util.h"
#include "model/io/gguf_writer.h"
#include "model/io/safetensors.h"
#include "model/io/torch_pth_test_writer.h"
#include "model/lora_test_adapters.h"
#include "model/test_models.h"
#include "model/transformer.h"

namespace minigen {
namespace {

using testing::Bytes;
using testing::TestTensor;

const ModelConfig& tiny() {
  static const ModelConfig config = testing::test_config("tiny");
  return config;
}

// save_lora's state dict for these pairs: `<module>.lora.A.weight` / `.lora.B.weight`, fp16, under `prefix`.
Bytes minimind_pth(const std::vector<LoraTensors>& pairs, const std::string& prefix = "") {
  std::vector<TestTensor> tensors;
  for (const LoraTensors& pair : pairs) {
    for (const auto& [suffix, tensor] : {std::pair{".lora.A.weight", &pair.a}, std::pair{".lora.B.weight", &pair.b}}) {
      tensors.emplace_back(prefix + pair.module + suffix, DType::kF16, std::to_string(tensors.size()), tensor->values,
                           0, tensor->shape, std::vector<int64_t>{tensor->shape[1], 1});
    }
  }
  return testing::pth_archive(tensors);
}

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

class LoraFiles : public testing::ScratchFileTest {};

TEST_F(LoraFiles, ReadsMiniMindsPthWithItsModulePrefixStripped) {
  const auto pairs = testing::random_lora_tensors(
      tiny(), {"model.layers.0.self_attn.q_proj", "model.layers.3.self_attn.o_proj"}, 16, 3);
  const auto path = testing::scratch_path("lora_identity_256.pth");
  testing::write_bytes(path, minimind_pth(pairs, "module."));  // as DataParallel training names them
  const auto adapter = load_lora_adapter(path, tiny());
  EXPECT_EQ(adapter->name, path.stem().string());  // the file's stem
  EXPECT_EQ(adapter->format, "MiniMind .pth");
  EXPECT_EQ(adapter->scale, 1.0f);
  EXPECT_EQ(adapter->summary(), "q_proj, o_proj in 2 of 4 layers, rank 16");
  EXPECT_EQ(adapter->parameter_count(), 2 * 16 * (256 + 256));
  // fp16 in the file: the values read are the fp16 roundings of what was written.
  ASSERT_TRUE(adapter->layers[3].o.present());
  EXPECT_NEAR(adapter->layers[3].o.b.values[5], pairs[1].b.values[5], 1e-3 * std::fabs(pairs[1].b.values[5]) + 1e-7);
  EXPECT_FALSE(adapter->layers[1].q.present());
}

TEST_F(LoraFiles, ReadsAPeftFolderWithItsScale) {
  const auto pairs =
      testing::random_lora_tensors(tiny(), {"model.layers.1.self_attn.v_proj", "model.layers.2.mlp.up_proj"}, 8, 4);
  const auto folder = testing::scratch_path("peft");
  std::filesystem::create_directories(folder);
  TensorMap tensors;
  for (const LoraTensors& pair : pairs) {
    tensors["base_model.model." + pair.module + ".lora_A.weight"] = pair.a;
    tensors["base_model.model." + pair.module + ".lora_B.weight"] = pair.b;
  }
  write_safetensors(folder / "adapter_model.safetensors", tensors);
  std::ofstream(folder / "adapter_config.json")
      << R"({"peft_type": "LORA", "r": 8, "lora_alpha": 32, "target_modules": ["v_proj", "up_proj"],
            "bias": "none", "fan_in_fan_out": false, "use_rslora": false, "rank_pattern": {}, "alpha_pattern": {}})";
  const auto adapter = load_lora_adapter(folder, tiny());
  EXPECT_EQ(adapter->format, "PEFT");
  EXPECT_EQ(adapter->scale, 4.0f);  // lora_alpha / r
  EXPECT_EQ(adapter->name, folder.filename().string());
  EXPECT_EQ(adapter->summary(), "v_proj, up_proj in 2 of 4 layers, rank 8, scale 4");
  EXPECT_EQ(adapter->layers[2].mlp.up.a.values, pairs[1].a.values);  // fp32 in the file: exact
  // The safetensors file itself (beside its adapter_config.json) means the same adapter.
  EXPECT_EQ(load_lora_adapter(folder / "adapter_model.safetensors", tiny())->parameter_count(),
            adapter->parameter_count());

  std::ofstream(folder / "adapter_config.json") << R"({"r": 8, "lora_alpha": 8, "use_rslora": true})";
  EXPECT_FLOAT_EQ(load_lora_adapter(folder, tiny())->scale, 8.0f / std::sqrt(8.0f));
  std::ofstream(folder / "adapter_config.json") << R"({"r": 4, "lora_alpha": 8})";
  EXPECT_NE(error_of([&] { load_lora_adapter(folder, tiny()); }).find("has rank 8 but adapter_config.json says r = 4"),
            std::string::npos);
  std::ofstream(folder / "adapter_config.json") << R"({"r": 8, "bias": "all"})";
  EXPECT_NE(error_of([&] { load_lora_adapter(folder, tiny()); }).find("bias is \"all\""), std::string::npos);
  std::ofstream(folder / "adapter_config.json") << R"({"r": 8, "rank_pattern": {"q_proj": 4}})";
  EXPECT_NE(error_of([&] { load_lora_adapter(folder, tiny()); }).find("rank_pattern"), std::string::npos);
  std::ofstream(folder / "adapter_config.json") << R"({"r": 8, "peft_type": "IA3"})";
  EXPECT_NE(error_of([&] { load_lora_adapter(folder, tiny()); }).find("minigen reads LORA adapters"),
            std::string::npos);
  std::ofstream(folder / "adapter_config.json") << R"({"r": 8,)";
  EXPECT_NE(error_of([&] { load_lora_adapter(folder, tiny()); }).find("is not valid JSON"), std::string::npos);
  std::filesystem::remove(folder / "adapter_config.json");
  EXPECT_NE(error_of([&] { load_lora_adapter(folder, tiny()); }).find("without adapter_config.json"),
            std::string::npos);
}

TEST_F(LoraFiles, HostileFilesGetOneClearError) {
  const auto path = testing::scratch_path("bad.pth");
  const auto message = [&](const Bytes& bytes) {
    testing::write_bytes(path, bytes);
    return error_of([&] { load_lora_adapter(path, tiny()); });
  };
  auto pairs = testing::random_lora_tensors(tiny(), {"model.layers.0.self_attn.q_proj"}, 4, 5);
  // A whole model's tensor where an adapter was expected.
  std::vector<TestTensor> model_tensor;
  model_tensor.emplace_back("model.norm.weight", DType::kF16, "0", std::vector<float>(256, 1.0f), 0,
                            std::vector<int64_t>{256}, std::vector<int64_t>{1});
  EXPECT_NE(message(testing::pth_archive(model_tensor)).find("which is not a LoRA matrix"), std::string::npos);
  // A without B.
  std::vector<TestTensor> only_a;
  only_a.emplace_back("model.layers.0.self_attn.q_proj.lora.A.weight", DType::kF16, "0", pairs[0].a.values, 0,
                      pairs[0].a.shape, std::vector<int64_t>{256, 1});
  EXPECT_NE(message(testing::pth_archive(only_a)).find("has an A but no B"), std::string::npos);
  // The rank of a matrix larger than the matrix: A [300, 256] on a 256 × 256 q_proj.
  auto too_big = testing::random_lora_tensors(tiny(), {"model.layers.0.self_attn.q_proj"}, 4, 5);
  too_big[0].a.shape = {300, 256};
  too_big[0].a.values.assign(300 * 256, 0.01f);
  too_big[0].b.shape = {256, 300};
  too_big[0].b.values.assign(256 * 300, 0.01f);
  EXPECT_NE(message(minimind_pth(too_big)).find("rank 300; a rank must be between 1 and min(in, out) = 256"),
            std::string::npos);
  // NaN (fp16 keeps it).
  pairs[0].b.values[3] = std::nanf("");
  EXPECT_NE(message(minimind_pth(pairs)).find("not finite"), std::string::npos);
  // A storage that claims far more elements than the file holds (a 2 GB claim in a small file).
  std::vector<TestTensor> lying;
  lying.emplace_back("model.layers.0.self_attn.q_proj.lora.A.weight", DType::kF16, "0", pairs[0].a.values, 0,
                     std::vector<int64_t>{1 << 20, 1024}, std::vector<int64_t>{1024, 1}, int64_t{1} << 30);
  const std::string lie = message(testing::pth_archive(lying));
  EXPECT_NE(lie, "(no error)");
  EXPECT_NE(lie.find("bad.pth"), std::string::npos) << lie;
  EXPECT_NE(message("not a zip at all").find("bad.pth"), std::string::npos);
  EXPECT_NE(
      error_of([&] { load_lora_adapter(testing::scratch_path("missing.pth"), tiny()); }).find("LoRA adapter not found"),
      std::string::npos);
}

// An adapter whose shapes do not fit the model is refused from what the file claims, before its values are read: a
// PEFT folder claiming a 2 GB A for q_proj (a hole, no disk) and a MiniMind .pth with a 64 MB one cost a few MB of
// peak memory (before: the whole file in fp32 first, 4,133 MB for the 2 GB adapter, then the shape error).
TEST_F(LoraFiles, AnAdapterThatDoesNotFitIsRefusedBeforeItsValuesAreRead) {
  const auto folder = testing::scratch_path("claims-peft");
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "adapter_config.json") << R"({"peft_type": "LORA", "r": 8, "lora_alpha": 16})";
  const std::string module = "base_model.model.model.layers.0.self_attn.q_proj";
  ASSERT_TRUE(testing::write_safetensors_with_claims(
      folder / "adapter_model.safetensors", {},
      {{module + ".lora_A.weight", "F16", {8, 128 * 1024 * 1024}}, {module + ".lora_B.weight", "F16", {256, 8}}}));
  std::string peft_error;
  const std::optional<uint64_t> peft_rise =
      testing::peak_rise_bytes([&] { peft_error = error_of([&] { load_lora_adapter(folder, tiny()); }); });
  EXPECT_NE(peft_error.find("has shape [8, 134217728] but the model needs [8, 256]"), std::string::npos) << peft_error;

  const auto pth = testing::scratch_path("claims.pth");
  {
    std::vector<TestTensor> tensors;
    const std::vector<float> big(size_t{8} << 22, 0.0f);  // A [8, 4 Mi] in fp16: 64 MB
    tensors.emplace_back("model.layers.0.self_attn.q_proj.lora.A.weight", DType::kF16, "0", big, 0,
                         std::vector<int64_t>{8, 4 << 20}, std::vector<int64_t>{4 << 20, 1});
    tensors.emplace_back("model.layers.0.self_attn.q_proj.lora.B.weight", DType::kF16, "1",
                         std::vector<float>(256 * 8, 0.0f), 0, std::vector<int64_t>{256, 8},
                         std::vector<int64_t>{8, 1});
    testing::write_bytes(pth, testing::pth_archive(tensors));
  }
  testing::return_test_memory();
  std::string pth_error;
  const std::optional<uint64_t> pth_rise =
      testing::peak_rise_bytes([&] { pth_error = error_of([&] { load_lora_adapter(pth, tiny()); }); });
  EXPECT_NE(pth_error.find("has shape [8, 4194304] but the model needs [8, 256]"), std::string::npos) << pth_error;
  if (!peft_rise || !pth_rise) GTEST_SKIP() << "this kernel does not let a process reset its peak RSS";
  EXPECT_LT(*peft_rise, uint64_t{16} << 20);
  EXPECT_LT(*pth_rise, uint64_t{16} << 20);  // the fp32 copy alone would be 128 MB
}

}  // namespace
}  // namespace minigen

namespace minigen {
namespace {

// An adapter written as llama.cpp's GGUF adapter and read back runs with the same bits — on qwen3 (tiny) and on the
// llama layout (minimind2), whose q and k rows GGUF stores permuted, so B's rows must move with them and back.
class GgufLoraRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufLoraRoundTrip, WrittenAndReadBackTheAdapterGivesTheSameLogits) {
  const auto model = testing::random_test_model(GetParam());
  const ModelConfig& config = model->config;
  const LoraAdapter adapter = testing::random_lora(config, testing::adaptable_modules(config), 4, 9, 0.2f, 1.5f);
  const GgufExport exported = gguf_lora_export(config, adapter, "test");
  const std::string bytes = gguf_bytes(exported.metadata, exported.tensors);
  const GgufFile file = read_gguf(std::as_bytes(std::span(bytes.data(), bytes.size())), "test.gguf");
  const LoraAdapter read_back = lora_from_gguf(file, config, "test.gguf");
  EXPECT_EQ(read_back.scale, 1.5f);  // alpha 6 / rank 4
  EXPECT_EQ(read_back.alpha, 6.0f);
  EXPECT_EQ(read_back.parameter_count(), adapter.parameter_count());
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<int> tokens = testing::test_prompt(8, 1);
  const auto logits = [&](const LoraAdapter& with) {
    KvCache cache(config.kv_layout(), 8);
    const ForwardRow row{&cache, tokens, true, &with};
    return transformer.forward({&row, 1});
  };
  const std::vector<float> expected = logits(adapter);
  const std::vector<float> actual = logits(read_back);
  EXPECT_EQ(std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)), 0);
  // A model GGUF, or an adapter for another architecture, is one clear error.
  EXPECT_NE(error_of([&] {
              lora_from_gguf(file, testing::test_config(GetParam() == "tiny" ? "minimind2" : "tiny"), "test.gguf");
            }).find("is an adapter for the"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Architectures, GgufLoraRoundTrip, ::testing::Values("tiny", "minimind2"));

}  // namespace
}  // namespace minigen
