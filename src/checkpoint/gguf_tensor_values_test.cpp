#include "checkpoint/gguf_tensor_values.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/gguf_model_test_util.h"
#include "checkpoint/model_description.h"
#include "checkpoint/model_loader.h"
#include "checkpoint/prompt_logits_test_util.h"
#include "core/error.h"
#include "model/io/gguf_quant_test_blocks.h"
#include "model/io/gguf_test_builder.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using testing::bit_identical;
using testing::prompt_logits;

using testing::kGgufTestPrompt;

// A [rows][256] matrix of K-quant super-blocks, one per row, with fields drawn from `seed`, and the values the
// format's formula gives them (computed by the test's block encoders, not by minigen's dequantizer).
struct KQuantMatrix {
  std::string bytes;
  std::vector<float> values;
};
KQuantMatrix k_quant_matrix(GgufTensorType type, int rows, uint64_t seed) {
  testing::BlockFields fields(seed);
  KQuantMatrix matrix;
  for (int row = 0; row < rows; ++row) {
    std::vector<uint8_t> block;
    if (type == GgufTensorType::kQ6_K) {
      const testing::SignedBlock fields_of_row = fields.signed_block();
      block = fields_of_row.encode();
      for (int n = 0; n < kGgufSuperBlock; ++n) matrix.values.push_back(fields_of_row.expected(n));
    } else {
      const bool five_bit = type == GgufTensorType::kQ5_K;
      const testing::ScaledBlock fields_of_row = fields.scaled(five_bit ? 32 : 16);
      block = fields_of_row.encode(five_bit);
      for (int n = 0; n < kGgufSuperBlock; ++n) matrix.values.push_back(fields_of_row.expected(n));
    }
    matrix.bytes.append(block.begin(), block.end());
  }
  return matrix;
}

// A [rows][cols] matrix of Q4_1, Q5_0 or Q5_1 blocks (cols a multiple of 32) and the values the formula gives.
KQuantMatrix legacy_matrix(GgufTensorType type, int rows, int cols, uint64_t seed) {
  testing::BlockFields fields(seed);
  KQuantMatrix matrix;
  for (int block = 0; block < rows * cols / kGgufQuantBlock; ++block) {
    const testing::LegacyBlock fields_of_block = fields.legacy(type);
    const std::vector<uint8_t> bytes = fields_of_block.encode();
    matrix.bytes.append(bytes.begin(), bytes.end());
    for (int j = 0; j < kGgufQuantBlock; ++j) matrix.values.push_back(fields_of_block.expected(j));
  }
  return matrix;
}

std::string f32_bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The values of a Q8_0 tensor, d · q, computed here from the block layout.
std::vector<float> q8_0_values(const GgufTensorInfo& info) {
  std::vector<float> values;
  const auto* bytes = reinterpret_cast<const unsigned char*>(info.bytes.data());
  for (std::size_t block = 0; block < info.bytes.size() / 34; ++block) {
    const float d = f16_to_float(static_cast<uint16_t>(bytes[34 * block] | (bytes[34 * block + 1] << 8)));
    for (int k = 0; k < 32; ++k)
      values.push_back(d * static_cast<float>(static_cast<int8_t>(bytes[34 * block + 2 + k])));
  }
  return values;
}

class GgufKQuantModel : public testing::ScratchFileTest {
 protected:
  // `file`'s tensor `name` stored as `type` with `bytes` (kept alive by the fixture).
  void replace(GgufFile& file, const std::string& name, GgufTensorType type, std::string bytes) {
    kept_.push_back(std::move(bytes));
    for (GgufTensorInfo& info : file.tensors) {
      if (info.name != name) continue;
      info.type = type;
      info.bytes = std::as_bytes(std::span(kept_.back().data(), kept_.back().size()));
      return;
    }
    FAIL() << "no tensor " << name;
  }

  static fs::path write(const GgufFile& file, const std::string& name) {
    const fs::path path = testing::scratch_path(name);
    testing::write_bytes(path, testing::relaid_gguf(file, 32));
    return path;
  }

  // The message loading `file` gives, or "" if it loads.
  static std::string load_error(const GgufFile& file) {
    const fs::path path = write(file, "hostile.gguf");
    try {
      load_model(path);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string();
  }

  std::deque<std::string> kept_;
};

// A llama.cpp-style K-quant file — a Q6_K embedding, a Q4_K and a Q5_K layer matrix, the rest F32 — loads its K-quant
// matrices as exactly the values the format defines and gives bit for bit the logits of the same model stored in F32.
TEST_F(GgufKQuantModel, KQuantMatricesLoadAsTheirExactValues) {
  const LoadedModel original = load_model(testing::save_random_model("tiny"));
  std::string storage;
  GgufFile file = testing::read_file(testing::export_gguf(original, GgufTensorType::kF32, "tiny.gguf"), storage);
  const KQuantMatrix embedding = k_quant_matrix(GgufTensorType::kQ6_K, 6400, 1);
  const KQuantMatrix query = k_quant_matrix(GgufTensorType::kQ4_K, 256, 2);
  const KQuantMatrix output = k_quant_matrix(GgufTensorType::kQ5_K, 256, 3);
  GgufFile reference = file;
  replace(file, "token_embd.weight", GgufTensorType::kQ6_K, embedding.bytes);
  replace(file, "blk.0.attn_q.weight", GgufTensorType::kQ4_K, query.bytes);
  replace(file, "blk.1.attn_output.weight", GgufTensorType::kQ5_K, output.bytes);
  replace(reference, "token_embd.weight", GgufTensorType::kF32, f32_bytes(embedding.values));
  replace(reference, "blk.0.attn_q.weight", GgufTensorType::kF32, f32_bytes(query.values));
  replace(reference, "blk.1.attn_output.weight", GgufTensorType::kF32, f32_bytes(output.values));

  const LoadedModel k_quants = load_model(write(file, "k-quants.gguf"));
  const LoadedModel floats = load_model(write(reference, "reference.gguf"));
  const ModelWeights& weights = k_quants.model->weights;
  EXPECT_EQ(weights.embed_tokens.values, embedding.values);
  EXPECT_EQ(weights.layers[0].q_proj.values, query.values);  // qwen3 keeps HF's row order
  EXPECT_EQ(weights.layers[1].o_proj.values, output.values);
  EXPECT_EQ(weights.stored_quantization(), WeightType::kF32);
  EXPECT_TRUE(
      bit_identical(prompt_logits(*k_quants.model, kGgufTestPrompt), prompt_logits(*floats.model, kGgufTestPrompt)));

  // In the file's order, which relaid_gguf reverses.
  ASSERT_EQ(k_quants.gguf_dequantized.size(), 3u);
  EXPECT_EQ(k_quants.gguf_dequantized[2].name, "token_embd.weight");
  EXPECT_EQ(k_quants.gguf_dequantized[2].type, GgufTensorType::kQ6_K);
  EXPECT_EQ(dequantized_tensor_lines(k_quants, WeightType::kF32),
            (std::vector<std::string>{"Q4_K → f32 values at load, run as f32: blk.0.attn_q.weight",
                                      "Q5_K → f32 values at load, run as f32: blk.1.attn_output.weight",
                                      "Q6_K → f32 values at load, run as f32: token_embd.weight"}));
  EXPECT_EQ(model_description(k_quants)["dequantized_tensors"][0],
            (nlohmann::json{{"tensor", "blk.1.attn_output.weight"}, {"gguf_type", "Q5_K"}, {"loaded_as", "f32"}}));
  EXPECT_TRUE(model_description(floats)["dequantized_tensors"].empty());
}

// What llama-quantize's Q4_0 writes for a tied embedding: Q4_0 layers, a Q6_K token_embd. The layers keep their
// codes and run as q4; the embedding's exact values are packed as q8 like any float output projection, so the model
// gives the logits of the same file with the embedding stored as F32, bit for bit.
TEST_F(GgufKQuantModel, AQ4_0FileWithAQ6KEmbeddingRunsAsQ4) {
  const LoadedModel original = load_model(testing::save_random_model("tiny"));
  std::string storage;
  GgufFile file = testing::read_file(testing::export_gguf(original, GgufTensorType::kQ4_0, "tiny-q4.gguf"), storage);
  const KQuantMatrix embedding = k_quant_matrix(GgufTensorType::kQ6_K, 6400, 4);
  GgufFile reference = file;
  replace(file, "token_embd.weight", GgufTensorType::kQ6_K, embedding.bytes);
  replace(reference, "token_embd.weight", GgufTensorType::kF32, f32_bytes(embedding.values));

  const LoadedModel mixed = load_model(write(file, "q4-q6k.gguf"));
  const LoadedModel floats = load_model(write(reference, "q4-f32.gguf"));
  EXPECT_EQ(mixed.model->weights.stored_quantization(), WeightType::kQ4);
  EXPECT_EQ(mixed.model->weights.embed_tokens.values, embedding.values);
  EXPECT_EQ(mixed.model->weights.layers[0].q_proj.coded, WeightType::kQ4);  // the Q4_0 codes as they are
  EXPECT_TRUE(bit_identical(prompt_logits(*mixed.model, kGgufTestPrompt, WeightType::kQ4),
                            prompt_logits(*floats.model, kGgufTestPrompt, WeightType::kQ4)));
  EXPECT_EQ(dequantized_tensor_lines(mixed, WeightType::kQ4),
            std::vector<std::string>{"Q6_K → f32 values at load, run as q8: token_embd.weight"});
}

// llama-quantize falls back to Q8_0 for rows that are not a multiple of 256 (tiny's ffn_down has 832 columns), so a
// K-quant file can hold both. A model runs one block type, so there the Q8_0 blocks become their exact values d · q
// too, and the model runs in f32 with the logits of the file stored all in F32.
TEST_F(GgufKQuantModel, KQuantLayersBesideQ8_0OnesAllLoadAsValues) {
  const LoadedModel original = load_model(testing::save_random_model("tiny"));
  std::string storage;
  GgufFile file = testing::read_file(testing::export_gguf(original, GgufTensorType::kQ8_0, "tiny-q8.gguf"), storage);
  const KQuantMatrix query = k_quant_matrix(GgufTensorType::kQ4_K, 256, 5);
  GgufFile reference = file;
  std::size_t q8_0_tensors = 0;
  for (const GgufTensorInfo& info : file.tensors) {
    if (info.type != GgufTensorType::kQ8_0) continue;
    ++q8_0_tensors;
    replace(reference, info.name, GgufTensorType::kF32, f32_bytes(q8_0_values(info)));
  }
  replace(file, "blk.0.attn_q.weight", GgufTensorType::kQ4_K, query.bytes);
  replace(reference, "blk.0.attn_q.weight", GgufTensorType::kF32, f32_bytes(query.values));

  const LoadedModel mixed = load_model(write(file, "q4k-q8.gguf"));
  const LoadedModel floats = load_model(write(reference, "all-f32.gguf"));
  EXPECT_EQ(mixed.model->weights.stored_quantization(), WeightType::kF32);
  EXPECT_TRUE(
      bit_identical(prompt_logits(*mixed.model, kGgufTestPrompt), prompt_logits(*floats.model, kGgufTestPrompt)));
  EXPECT_EQ(mixed.gguf_dequantized.size(), q8_0_tensors);  // the Q8_0 ones and attn_q, which was one of them
  const std::vector<std::string> lines = dequantized_tensor_lines(mixed, WeightType::kF32);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "Q4_K → f32 values at load, run as f32: blk.0.attn_q.weight");
  // The first four names in the file's order (relaid_gguf lists the infos in reverse).
  EXPECT_EQ(lines[1], "Q8_0 → f32 values at load, run as f32: " + std::to_string(q8_0_tensors - 1) +
                          " tensors, blk.3.ffn_down.weight, blk.3.ffn_up.weight, blk.3.ffn_gate.weight, "
                          "blk.3.attn_output.weight, …");
}

// What llama-quantize's Q4_K_M and Q5_K_M write for tiny: K-quant matrices, and Q5_0 or Q5_1 for ffn_down, whose
// 832-value rows are not a whole number of super-blocks. Every block type comes out as its exact values.
TEST_F(GgufKQuantModel, KQuantFilesWithQ4_1Q5_0AndQ5_1FallbacksLoadTheirExactValues) {
  const LoadedModel original = load_model(testing::save_random_model("tiny"));
  std::string storage;
  GgufFile file = testing::read_file(testing::export_gguf(original, GgufTensorType::kF32, "tiny.gguf"), storage);
  GgufFile reference = file;
  const GgufTensorType down_types[] = {GgufTensorType::kQ5_0, GgufTensorType::kQ5_1, GgufTensorType::kQ4_1,
                                       GgufTensorType::kQ5_0};
  std::vector<KQuantMatrix> downs;
  for (int layer = 0; layer < 4; ++layer) {
    const std::string prefix = "blk." + std::to_string(layer) + ".";
    const KQuantMatrix query = k_quant_matrix(GgufTensorType::kQ4_K, 256, 10 + layer);
    downs.push_back(legacy_matrix(down_types[layer], 256, 832, 20 + layer));
    replace(file, prefix + "attn_q.weight", GgufTensorType::kQ4_K, query.bytes);
    replace(file, prefix + "ffn_down.weight", down_types[layer], downs.back().bytes);
    replace(reference, prefix + "attn_q.weight", GgufTensorType::kF32, f32_bytes(query.values));
    replace(reference, prefix + "ffn_down.weight", GgufTensorType::kF32, f32_bytes(downs.back().values));
  }
  const LoadedModel mixed = load_model(write(file, "k-quants-fallbacks.gguf"));
  const LoadedModel floats = load_model(write(reference, "fallbacks-f32.gguf"));
  for (int layer = 0; layer < 4; ++layer)
    EXPECT_EQ(mixed.model->weights.layers[layer].mlp.down.values, downs[layer].values);
  EXPECT_TRUE(
      bit_identical(prompt_logits(*mixed.model, kGgufTestPrompt), prompt_logits(*floats.model, kGgufTestPrompt)));
  EXPECT_EQ(dequantized_tensor_lines(mixed, WeightType::kQ8),
            (std::vector<std::string>{
                "Q4_1 → f32 values at load, run as q8: blk.2.ffn_down.weight",
                "Q4_K → f32 values at load, run as q8: 4 tensors, blk.3.attn_q.weight, blk.2.attn_q.weight, "
                "blk.1.attn_q.weight, blk.0.attn_q.weight",
                "Q5_0 → f32 values at load, run as q8: 2 tensors, blk.3.ffn_down.weight, blk.0.ffn_down.weight",
                "Q5_1 → f32 values at load, run as q8: blk.1.ffn_down.weight"}));
}

// Hostile K-quant tensors: each gives one minigen::Error naming the tensor, never a crash.
TEST_F(GgufKQuantModel, HostileKQuantTensorsGiveOneClearError) {
  const LoadedModel original = load_model(testing::save_random_model("tiny"));
  std::string storage;
  const GgufFile file = testing::read_file(testing::export_gguf(original, GgufTensorType::kF32, "tiny.gguf"), storage);
  const KQuantMatrix embedding = k_quant_matrix(GgufTensorType::kQ6_K, 6400, 6);
  const std::string prefix = testing::scratch_path("hostile.gguf").string() + ": ";

  GgufFile half_rows = file;  // the same bytes claimed as rows of 128 values
  replace(half_rows, "token_embd.weight", GgufTensorType::kQ6_K, embedding.bytes);
  for (GgufTensorInfo& info : half_rows.tensors) {
    if (info.name == "token_embd.weight") info.dims = {128, 12800};
  }
  EXPECT_EQ(load_error(half_rows), prefix +
                                       "GGUF tensor 'token_embd.weight' is Q6_K but its first dimension 128 is "
                                       "not a multiple of 256, the values of one block");

  GgufFile infinite = file;
  std::string infinite_bytes = embedding.bytes;
  infinite_bytes[5 * 210 + 208] = 0x00;  // super-block 5's d: fp16 0x7C00, +infinity
  infinite_bytes[5 * 210 + 209] = 0x7c;
  replace(infinite, "token_embd.weight", GgufTensorType::kQ6_K, infinite_bytes);
  EXPECT_EQ(load_error(infinite),
            prefix + "tensor 'token_embd.weight': Q6_K super-block 5 has a scale (d or dmin) that is not finite");

  GgufFile quantized_norm = file;
  replace(quantized_norm, "output_norm.weight", GgufTensorType::kQ4_K, embedding.bytes.substr(0, 144));
  EXPECT_EQ(load_error(quantized_norm),
            prefix + "tensor 'output_norm.weight' is a Q4_K vector; minigen keeps vectors as floats");

  // The file cut inside the K-quant data: the header promises bytes that are not there. The embedding is moved
  // last, so its data ends the file and its info comes first (relaid_gguf lists the infos in reverse).
  GgufFile whole = file;
  replace(whole, "token_embd.weight", GgufTensorType::kQ6_K, embedding.bytes);
  std::rotate(whole.tensors.begin(), whole.tensors.begin() + 1, whole.tensors.end());
  ASSERT_EQ(whole.tensors.back().name, "token_embd.weight");
  std::string bytes = testing::relaid_gguf(whole, 32);
  bytes.resize(bytes.size() - embedding.bytes.size() / 2);
  const fs::path cut = testing::scratch_path("cut.gguf");
  testing::write_bytes(cut, bytes);
  try {
    load_model(cut);
    FAIL() << "a cut file loaded";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind(cut.string() + ": GGUF tensor 'token_embd.weight' needs bytes [", 0), 0u)
        << error.what();
  }
}

}  // namespace
}  // namespace minigen
