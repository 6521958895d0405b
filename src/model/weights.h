#pragma once
// The model's parameters as plain arrays, named as in MiniMind's state dict. Matrices are [out, in] (nn.Linear).
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/tensor.h"
#include "ops/packed_matrix.h"

namespace minigen {

struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<float> values;   // rows · cols, row-major; empty when the file stored codes or f16_bits holds them
  DType stored = DType::kF32;  // the element type the file held the values in (widened exactly to fp32 here)
  // The file's fp16 bits instead of `values`, when it was read with TensorReadOptions::keep_fp16_matrices (a weight
  // update of a model served as f16): they pack into f16 panels as they are.
  std::vector<uint16_t> f16_bits;
  // A matrix a q8/q4 model file stored quantized (model/quantized_tensors.h): one code per weight, row-major, and
  // one fp16 scale per block of 32 of each row. It packs only into its own type, without rounding anything again.
  WeightType coded = WeightType::kF32;
  std::vector<int8_t> codes;
  std::vector<uint16_t> scales;

  const float* data() const { return values.data(); }
  bool empty() const { return values.empty() && codes.empty() && f16_bits.empty(); }
  MatrixSource source() const {
    return {rows, values.data(), codes.data(), scales.data(), coded, f16_bits.empty() ? nullptr : f16_bits.data()};
  }
};

struct FeedForwardWeights {  // down(silu(gate(x)) * up(x))
  Matrix gate;
  Matrix up;
  Matrix down;
};

struct LayerWeights {
  std::vector<float> input_norm;           // [hidden]
  std::vector<float> post_attention_norm;  // [hidden]
  Matrix q_proj, k_proj, v_proj, o_proj;
  std::vector<float> q_norm, k_norm;  // [head_dim]; empty without qk-norm
  FeedForwardWeights mlp;             // dense models
  Matrix router;                      // MoE: [experts, hidden]
  std::vector<FeedForwardWeights> experts;
  std::vector<FeedForwardWeights> shared_experts;
};

struct ModelWeights {
  Matrix embed_tokens;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;  // [hidden]
  Matrix lm_head;                 // empty when tied to embed_tokens

  const Matrix& output_projection() const { return lm_head.empty() ? embed_tokens : lm_head; }
  // q8 or q4 when the file stored the layers' matrices quantized; f32 for float files.
  WeightType stored_quantization() const { return layers.empty() ? WeightType::kF32 : layers.front().q_proj.coded; }
  // True when every matrix the products read was stored in fp16 (a MiniMind .pth, an update_policy directory): the
  // f16 weight type then holds them exactly.
  bool matrices_stored_in_f16() const;
};

// Takes the tensors a file held and checks every name and shape against the config; a missing, extra or
// misshapen tensor is a minigen::Error naming it. Values are moved out of `tensors`.
ModelWeights weights_from_tensors(const ModelConfig& config, TensorMap&& tensors);
// The inverse, for writing a model file: fp32 (both embed_tokens and lm_head, as MiniMind's state dicts hold), or
// quantized q8/q4 (codes and scales, model/quantized_tensors.h; the tied embedding once, q8 in a q4 model).
TensorMap tensors_from_weights(const ModelConfig& config, const ModelWeights& weights,
                               WeightType type = WeightType::kF32);
// Deterministic random weights for any config: embeddings N(0, 0.25²), linear layers N(0, 1/fan_in), norms 1 ± 0.1.
// Wide logits make greedy choices well separated, so tests comparing implementations are not decided by ties.
ModelWeights random_weights(const ModelConfig& config, uint64_t seed);

}  // namespace minigen
